import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A response as the tests inspect it.
struct HTTPResult: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: Data

    var text: String { String(decoding: body, as: UTF8.self) }

    func header(_ name: String) -> String? { headers.first(name: name) }

    /// The body parsed with Foundation (key order is irrelevant for these tests).
    func json() throws -> Any { try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) }
}

/// One HTTP client for all tests. It never follows redirects: tests look at 302s themselves.
enum HTTP {
    static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(60)))
    )

    static func basic(_ user: String, _ password: String = "testing") -> (String, String) {
        ("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }

    static let jsonAPIAccept = ("Accept", "application/vnd.api+json")

    static func request(
        _ method: HTTPMethod = .GET, _ url: String, headers: [(String, String)] = [], body: Data? = nil,
        timeout: TimeAmount = .seconds(60)
    ) async throws -> HTTPResult {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(data: body)) }
        let response = try await client.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 1 << 30)
        return HTTPResult(status: Int(response.status.code), headers: response.headers, body: Data(buffer: bytes))
    }

    static func get(_ url: String, headers: [(String, String)] = []) async throws -> HTTPResult {
        try await request(.GET, url, headers: headers)
    }

    /// A JSON request to the control API.
    static func control(_ method: HTTPMethod, _ url: String, _ json: String? = nil) async throws -> HTTPResult {
        try await request(
            method, url, headers: [("Content-Type", "application/json")], body: json.map { Data($0.utf8) })
    }
}
