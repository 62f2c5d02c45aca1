import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Turns a ``SimResponse`` into a Hummingbird response, streaming document bodies in chunks so that the
/// bandwidth cap, connection resets and download-progress reporting work on the real wire.
struct Streamer: Sendable {
    let statistics: Statistics
    let settings: SettingsBox

    /// Thrown inside a body writer to make the server drop the connection mid-body.
    struct InjectedReset: Error {}

    private static let chunkSize = 64 << 10

    /// What goes wrong in the middle of a body.
    enum BodyFault: Sendable {
        /// The connection drops after this many bytes.
        case reset(after: Int)
        /// The server goes silent for a while after this many bytes, then goes on.
        case stall(after: Int, milliseconds: Int)
    }

    func response(_ response: SimResponse, bodyFault: BodyFault?) -> Response {
        let resetAfter: Int? = if case .reset(let after) = bodyFault { after } else { nil }
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        let status =
            response.reason.map { HTTPResponse.Status(code: response.status, reasonPhrase: $0) }
            ?? HTTPResponse.Status(code: response.status)
        switch response.body {
        case .empty:
            if resetAfter != nil { return Response(status: status, headers: fields, body: reset(Data())) }
            return Response(status: status, headers: fields)
        case .bytes(let data):
            if let resetAfter {
                return Response(
                    status: status, headers: fields, body: reset(data.prefix(resetAfter), declared: data.count))
            }
            return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(data: data)))
        case .document(let id, let content, let size, let start):
            return Response(
                status: status, headers: fields,
                body: stream(id: id, route: response.route, size: size, fault: bodyFault) { offset, length in
                    ContentBytes.read(content, offset: start + offset, length: length)
                })
        }
    }

    /// A body of `size` bytes produced by `read`, paced to the bandwidth cap, with `fault` in the middle; the bytes
    /// written are counted under `route`. A `read` that runs dry before `size` bytes drops the connection.
    func stream(
        id: String, route: String, size: Int, fault: BodyFault?,
        read: @escaping @Sendable (_ offset: Int, _ length: Int) -> [UInt8]
    ) -> ResponseBody {
        let bandwidth = settings.get().bandwidthBytesPerSecond
        return ResponseBody(contentLength: size) { [statistics, settings] writer in
            let start = ContinuousClock.now
            var limit = size
            var stall: (at: Int, milliseconds: Int)?
            switch fault {
            case .reset(let after): limit = min(size, after)
            case .stall(let after, let milliseconds): stall = (min(size, after), milliseconds)
            case nil: break
            }
            var sent = 0
            // In progress from the first byte's write on: a client may hold that byte before `write` returns here.
            statistics.downloadProgress(id, route: route, bytes: 0)
            do {
                while sent < limit {
                    if let pause = stall, sent >= pause.at {
                        stall = nil
                        try await settings.pause(for: .milliseconds(pause.milliseconds))
                    }
                    let next = stall.map { $0.at - sent } ?? Self.chunkSize
                    let bytes = read(sent, min(Self.chunkSize, next, limit - sent))
                    guard !bytes.isEmpty else { break }
                    try await writer.write(ByteBuffer(bytes: bytes))
                    sent += bytes.count
                    statistics.downloadProgress(id, route: route, bytes: bytes.count)
                    if let bandwidth, bandwidth > 0 {
                        let due = start + .seconds(Double(sent) / Double(bandwidth))
                        try await settings.pause(until: due)
                    }
                }
                guard sent == size else { throw InjectedReset() }
                try await writer.finish(nil)
                statistics.downloadEnded(id, complete: true)
            } catch {
                statistics.downloadEnded(id, complete: false)
                throw error
            }
        }
    }

    /// Sends `prefix` of a body that claims `declared` bytes, then drops the connection.
    private func reset(_ prefix: Data, declared: Int? = nil) -> ResponseBody {
        ResponseBody(contentLength: declared ?? prefix.count + 1) { writer in
            if !prefix.isEmpty { try await writer.write(ByteBuffer(data: prefix)) }
            throw InjectedReset()
        }
    }
}

/// Random access to a document's bytes, whatever their source.
enum ContentBytes {
    static func read(_ content: Content, offset: Int, length: Int) -> [UInt8] {
        switch content {
        case .bytes(let data):
            let start = min(offset, data.count)
            let end = min(offset + length, data.count)
            return Array(data[data.startIndex + start..<data.startIndex + end])
        case .generated(let kind, let seed, let size):
            return ContentGenerator.bytes(kind: kind, seed: seed, size: size, offset: offset, length: length)
        case .external:
            return []
        }
    }

    /// The whole document, for the control API and tests (never for `huge` documents in a hot path).
    static func all(_ content: Content, size: Int) -> Data {
        Data(read(content, offset: 0, length: size))
    }
}
