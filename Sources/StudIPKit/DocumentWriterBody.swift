import AsyncHTTPClient
import Foundation
import Glibc
import NIOCore
import StudIPModel
import StudIPWire
import SystemSupport

/// A request body other than a form, made anew for each try of the request (a retry after a renewed login sends
/// it again from the start).
struct RequestBody: Sendable {
    let contentType: String
    let make: @Sendable () -> HTTPClientRequest.Body

    /// A small body held in memory (JSON).
    static func json(_ bytes: Data, contentType: String) -> RequestBody {
        RequestBody(contentType: contentType) { .bytes(bytes) }
    }
}

/// Called while an upload's bytes go out: bytes of the file handed to the connection so far, and the file's size.
public typealias UploadProgress = @Sendable (_ sent: Int64, _ total: Int64) -> Void

/// A file opened for an upload. Read with `pread` on the blocking pool (docs/threads.md), in chunks, so a 64 MiB
/// document is never held in memory whole; closed when the last reference goes (the upload is over).
final class UploadFile: Sendable {
    let path: String
    let size: Int64
    private let descriptor: Int32

    /// How much one read takes: large enough that the reads cost nothing beside the network, small enough that
    /// progress moves.
    static let chunkSize = 256 << 10

    private init(path: String, descriptor: Int32, size: Int64) {
        self.path = path
        self.descriptor = descriptor
        self.size = size
    }

    /// Opens `path` and learns its size on the blocking pool.
    static func open(_ path: String) async throws(StudIPError) -> UploadFile {
        do {
            return try await BlockingPool.shared.run { () throws(SystemCallError) -> UploadFile in
                let descriptor = try systemCall("open") { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
                var status = stat()
                do throws(SystemCallError) {
                    try systemCall("fstat") { fstat(descriptor, &status) }
                } catch {
                    close(descriptor)
                    throw error
                }
                return UploadFile(path: path, descriptor: descriptor, size: Int64(status.st_size))
            }
        } catch {
            throw .unreadableFile(path: path, detail: error.description)
        }
    }

    /// Closing a regular file read only does not block: done wherever the last reference goes.
    deinit { close(descriptor) }

    /// Up to `count` bytes from `offset`, read on the blocking pool; fewer only at the end of the file.
    fileprivate func read(at offset: Int64, count: Int) async throws(StudIPError) -> ByteBuffer {
        let descriptor = descriptor
        do {
            return try await BlockingPool.shared.run { () throws(SystemCallError) -> ByteBuffer in
                var buffer = ByteBuffer()
                var failure: SystemCallError?
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
                    do throws(SystemCallError) {
                        return Int(
                            try systemCall("pread") { pread(descriptor, raw.baseAddress, count, off_t(offset)) })
                    } catch {
                        failure = error
                        return 0
                    }
                }
                if let failure { throw failure }
                return buffer
            }
        } catch {
            throw .unreadableFile(path: path, detail: error.description)
        }
    }
}

/// A multipart upload: the text parts and the file part's header, the file's bytes chunk by chunk, the closing
/// boundary. Its length is known up front, so the request carries a `Content-Length` (PHP reads no chunked bodies).
struct MultipartUpload: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let head: [UInt8]
    let tail: [UInt8]
    let file: UploadFile
    let progress: UploadProgress?
    static let boundary = "----campusfs-upload-boundary-7d1f3c29a5b84e06"
    static let contentType = "multipart/form-data; boundary=\(boundary)"

    init(file: UploadFile, fileName: String, textParts: [(name: String, value: String)], progress: UploadProgress?) {
        (head, tail) = WriteFormat.multipart(
            boundary: Self.boundary, textParts: textParts, fileField: "file", fileName: fileName)
        self.file = file
        self.progress = progress
    }

    var length: Int64 { Int64(head.count) + file.size + Int64(tail.count) }

    var body: RequestBody {
        RequestBody(contentType: Self.contentType) { .stream(self, length: .known(length)) }
    }

    func makeAsyncIterator() -> Iterator { Iterator(upload: self) }

    struct Iterator: AsyncIteratorProtocol {
        let upload: MultipartUpload
        private var stage = Stage.head
        private var offset: Int64 = 0

        private enum Stage { case head, file, tail, done }

        init(upload: MultipartUpload) { self.upload = upload }

        mutating func next() async throws -> ByteBuffer? {
            switch stage {
            case .head:
                stage = upload.file.size > 0 ? .file : .tail
                upload.progress?(0, upload.file.size)
                return ByteBuffer(bytes: upload.head)
            case .file:
                let wanted = Int(Swift.min(Int64(UploadFile.chunkSize), upload.file.size - offset))
                let chunk = try await upload.file.read(at: offset, count: wanted)
                // A file that shrank while it was sent would make the body shorter than its Content-Length.
                guard chunk.readableBytes == wanted else {
                    throw StudIPError.unreadableFile(
                        path: upload.file.path, detail: "it changed size while it was sent")
                }
                offset += Int64(wanted)
                if offset == upload.file.size { stage = .tail }
                upload.progress?(offset, upload.file.size)
                return chunk
            case .tail:
                stage = .done
                return ByteBuffer(bytes: upload.tail)
            case .done:
                return nil
            }
        }
    }
}
