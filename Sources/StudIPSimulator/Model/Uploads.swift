import Foundation

/// What an installation accepts as an upload: Stud.IP's `$UPLOAD_TYPES["default"]` and PHP's limits, as the
/// captured 5.0.7 has them (fixtures-5.0.7-writes, its README's "Upload limits"; docs/simulator.md "Writing").
struct UploadPolicy: Sendable {
    /// Every extension but these (`type: "allow"`), compared without case.
    let forbiddenExtensions: Set<String> = ["exe"]
    /// `file_sizes` for `autor` and up (64 MiB); PHP's `upload_max_filesize` is the same.
    let maxFileSize = 64 << 20
    /// PHP's `post_max_size` (70 MiB): a larger request arrives with no files at all.
    let maxRequestSize = 70 << 20

    static let studIP507 = UploadPolicy()

    /// Whether Stud.IP would store a file of this name and size.
    func accepts(name: String, size: Int) -> Bool {
        let ext = name.split(separator: ".", omittingEmptySubsequences: false).dropFirst().last.map {
            $0.lowercased()
        }
        return !name.isEmpty && size <= maxFileSize && !(ext.map(forbiddenExtensions.contains) ?? false)
    }
}

extension University {
    /// The licence of an upload that names none: the `is-default` entry (`UNDEF_LICENSE` in 5.0.7).
    var defaultTermsOfUseID: String {
        termsOfUse.values.first(where: \.isDefault)?.id ?? "UNDEF_LICENSE"
    }

    /// The name Stud.IP stores when `name` is taken in the folder: `[n]` before the extension, no space, the first
    /// free `n` from `first` on. An upload counts from 2 (`Name[2].txt`), a rename and a new folder from 1
    /// (`w2_upload_same_name`, `w4_rename_patch_existing_name`, `w7_subfolder_groupfolder_same_name`).
    static func uniqueName(_ name: String, among taken: Set<String>, first: Int) -> String {
        guard taken.contains(name) else { return name }
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let base = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        var number = first
        while taken.contains("\(base)[\(number)]\(ext)") { number += 1 }
        return "\(base)[\(number)]\(ext)"
    }

    /// Adds a new document under a free name (see ``uniqueName(_:among:first:)``, uploads count from 2).
    mutating func addUpload(_ upload: FileRef) {
        var ref = upload
        ref.name = Self.uniqueName(upload.name, among: documentNames(in: upload.folderID), first: 2)
        ref.fileName = ref.name
        add(ref)
    }

    /// Adds a new folder under a free name (counting from 1).
    mutating func addNewFolder(_ folder: Folder) {
        var named = folder
        named.name = Self.uniqueName(folder.name, among: folderNames(in: folder.parentID), first: 1)
        add(named)
    }

    /// Names of the documents in a folder, but `excluding` one (a document being renamed).
    func documentNames(in folderID: String, excluding id: String? = nil) -> Set<String> {
        Set(fileRefs(in: folderID).filter { $0.id != id }.map(\.name))
    }

    func folderNames(in folderID: String) -> Set<String> {
        Set(subfolders(of: folderID).map(\.name))
    }
}
