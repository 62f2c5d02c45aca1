import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// `/__files/`: the plain HTTP index the benchmark mounts with rclone, with the API's bytes and latency.
@Suite("The benchmark's plain HTTP index")
struct FileIndexTests {
    static let course = "WS%202026-27/INF-101%20Einf%C3%BChrung%20in%20die%20Informatik/"

    @Test func listsSemestersCoursesFoldersAndServesTheDocumentsBytes() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let host = String(sim.controlURL.dropLast("/__sim".count))

            let root = try await HTTP.get(host + "/__files/")
            #expect(root.status == 200)
            #expect(
                root.text.contains(#"<a href="WS%202026-27/">WS 2026-27/</a>"#)
                    && root.text.contains(#"<a href="Ongoing/">Ongoing/</a>"#), "\(root.text)")
            let course = try await HTTP.get(host + "/__files/" + Self.course)
            #expect(course.text.contains(#"<a href="README.txt">README.txt</a>"#), "\(course.text)")
            #expect(course.text.contains(#"<a href="Vorlesungsfolien/">Vorlesungsfolien/</a>"#))

            let university = sim.university
            let inf101 = try #require(university.courses.values.first { $0.number == "INF-101" })
            let readme = try #require(university.fileRefs(in: inf101.topFolderID).first { $0.name == "README.txt" })
            let bytes = try await HTTP.get(host + "/__files/" + Self.course + "README.txt")
            let expected = try await HTTP.get("\(sim.controlURL)/documents/\(readme.id)/content")
            #expect(bytes.status == 200 && bytes.body == expected.body)
            #expect(try await HTTP.get(host + "/__files/" + Self.course + "nothing.txt").status == 404)
            #expect(sim.statistics.snapshot().routes["files"] == 4, "index requests are counted")
        }
    }

    /// A client reading in chunks (rclone's VFS) gets the part it asks for: 206 with `Content-Range`, or 416.
    @Test func aRangeRequestGetsThatPart() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let url = String(sim.controlURL.dropLast("/__sim".count)) + "/__files/" + Self.course + "README.txt"
            let whole = try await HTTP.get(url).body
            #expect(whole.count > 20)
            let middle = try await HTTP.get(url, headers: [("Range", "bytes=5-14")])
            #expect(middle.status == 206 && middle.body == whole.subdata(in: 5..<15))
            #expect(middle.header("Content-Range") == "bytes 5-14/\(whole.count)")
            let tail = try await HTTP.get(url, headers: [("Range", "bytes=10-")])
            #expect(tail.status == 206 && tail.body == whole.subdata(in: 10..<whole.count))
            let suffix = try await HTTP.get(url, headers: [("Range", "bytes=-4")])
            #expect(suffix.status == 206 && suffix.body == whole.suffix(4))
            let past = try await HTTP.get(url, headers: [("Range", "bytes=\(whole.count)-")])
            #expect(past.status == 416)
            let several = try await HTTP.get(url, headers: [("Range", "bytes=0-1,4-5")])
            #expect(several.status == 200 && several.body == whole, "several ranges: the whole document")
        }
    }
}
