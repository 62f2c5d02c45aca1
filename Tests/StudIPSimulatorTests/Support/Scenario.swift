import Foundation

@testable import StudIPSimulator

/// A tiny installation built in code, so infrastructure tests don't depend on any dataset's details.
enum Scenario {
    static let semesterID = "5e0000000000000000000000000000a1"
    static let courseID = "c0000000000000000000000000000001"
    static let rootFolderID = "f0000000000000000000000000000001"
    static let slidesFolderID = "f0000000000000000000000000000002"
    static let notesID = "d0000000000000000000000000000001"
    static let bigID = "d0000000000000000000000000000002"
    static let linkID = "d0000000000000000000000000000003"
    static let notes = Data("Lecture notes, week 1.\n".utf8)

    static func university(bigSize: Int = 2 << 20) -> University {
        var university = University(installationID: "test-installation")
        let student = User(
            id: "u0000000000000000000000000000001", username: "test_autor", password: "testing",
            givenName: "Testaccount", familyName: "Autor", perms: "autor", email: "autor@example.org")
        let lecturer = User(
            id: "u0000000000000000000000000000002", username: "test_dozent", password: "testing",
            givenName: "Testaccount", familyName: "Dozent", perms: "dozent", email: "dozent@example.org")
        university.add(student)
        university.add(lecturer)
        university.add(
            Semester(
                id: semesterID, title: "WS 2026/27", begin: 1_790_805_600, end: 1_806_530_399,
                lecturesBegin: 1_791_756_000, lecturesEnd: 1_801_868_399))
        university.add(
            TermsOfUse(
                id: "SELFMADE_NONPUB", name: "Selbst verfasst", icon: "own-license", position: 1, mkdate: 0, chdate: 0))
        university.add(
            Course(
                id: courseID, number: "INF-101", title: "Informatik", instituteID: "i0000000000000000000000000000001",
                semesterIDs: [semesterID],
                members: [
                    Membership(userID: lecturer.id, permission: "dozent", mkdate: 1_790_900_000),
                    Membership(userID: student.id, permission: "autor", mkdate: 1_790_900_000),
                ],
                topFolderID: rootFolderID, mkdate: 1_790_900_000, chdate: 1_790_900_000))
        university.add(
            Folder(
                id: rootFolderID, userID: lecturer.id, parentID: "", rangeID: courseID, folderType: "RootFolder",
                name: "",
                mkdate: 1_790_900_000, chdate: 1_790_900_000))
        university.add(
            Folder(
                id: slidesFolderID, userID: lecturer.id, parentID: rootFolderID, rangeID: courseID,
                folderType: "StandardFolder", name: "Folien", mkdate: 1_790_900_100, chdate: 1_790_900_100))
        university.add(
            FileRef(
                id: notesID, fileID: "e0000000000000000000000000000001", folderID: slidesFolderID, name: "notes.txt",
                userID: lecturer.id, mimeType: "text/plain", size: notes.count, mkdate: 1_790_900_200,
                chdate: 1_790_900_200, content: .bytes(notes)))
        university.add(
            FileRef(
                id: bigID, fileID: "e0000000000000000000000000000002", folderID: slidesFolderID, name: "big.bin",
                userID: lecturer.id, mimeType: "application/octet-stream", size: bigSize, mkdate: 1_790_900_300,
                chdate: 1_790_900_300, content: .generated(kind: .binary, seed: 7, size: bigSize)))
        university.add(
            FileRef(
                id: linkID, fileID: "e0000000000000000000000000000003", folderID: slidesFolderID, name: "Paper.pdf",
                userID: lecturer.id, mimeType: "application/pdf", size: 3000, mkdate: 1_790_900_400,
                chdate: 1_790_900_400, content: .external(url: "/elsewhere/\(linkID)/Paper.pdf")))
        return university
    }

    static func start(
        flavour: Flavour = .v55, settings: SimulatorSettings = SimulatorSettings(), bigSize: Int = 2 << 20,
        basePath: String = "", singleSignOn: SingleSignOnConfiguration? = nil
    ) async throws -> Simulator {
        try await Simulator.start(
            SimulatorConfiguration(
                dataset: .custom(university(bigSize: bigSize)), flavour: flavour, basePath: basePath,
                settings: settings, singleSignOn: singleSignOn))
    }
}
