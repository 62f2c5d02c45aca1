import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import StudIPModel
import Synchronization

/// The OAuth2 redirect target of a native app (RFC 8252 §7.3): a one-shot HTTP listener on 127.0.0.1 at a port the
/// system picks, where the browser lands after the user agreed.
///
/// Only `/callback` counts (a browser also asks for `/favicon.ico`); the first callback ends the wait, with the
/// code when its `state` is the login's, else with the error. The browser gets a short page either way.
public final class LoopbackRedirect: Sendable {
    /// `http://127.0.0.1:<port>/callback`
    public let redirectURI: String
    private let channel: any Channel
    private let inbox: Inbox

    private init(channel: any Channel, port: Int, inbox: Inbox) {
        self.channel = channel
        self.inbox = inbox
        redirectURI = "http://127.0.0.1:\(port)/callback"
    }

    /// Starts listening. Call ``stop()`` when done (``code(state:timeout:)`` does).
    public static func start() async throws(StudIPError) -> LoopbackRedirect {
        let inbox = Inbox()
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(CallbackHandler(inbox: inbox))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            guard let port = channel.localAddress?.port else {
                try? await channel.close()
                throw StudIPError.unreachable(server: "127.0.0.1", detail: "the redirect listener has no port")
            }
            return LoopbackRedirect(channel: channel, port: port, inbox: inbox)
        } catch let error as StudIPError {
            throw error
        } catch {
            throw .unreachable(server: "127.0.0.1", detail: "cannot listen for the browser's redirect: \(error)")
        }
    }

    /// Takes callbacks for the login with this `state` from now on. Call it before the browser opens: a quick
    /// browser comes back before ``code(state:timeout:)`` is called, and its callback then waits in the inbox.
    public func expect(state: String) {
        inbox.expect(state)
    }

    /// Waits for the browser's redirect and returns the code, checked against the login's `state`
    /// (``OAuth2Authorization/state``); stops listening afterwards. A timeout or a refusal in the browser is
    /// `.authenticationFailed`, another state `.unsafeLogin`.
    public func code(state: String, timeout: Duration) async throws(StudIPError) -> String {
        inbox.expect(state)
        let result = await withTaskGroup(of: Result<String, StudIPError>?.self) { group in
            group.addTask { await self.inbox.next() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        await stop()
        guard let result else {
            throw .authenticationFailed(
                server: redirectURI,
                message: "the browser did not come back within \(timeout.formatted()); log in again")
        }
        return try result.get()
    }

    public func stop() async {
        try? await channel.close()
        inbox.finish()
    }
}

/// Between the event loop and the waiting task: the login to check callbacks against, and their outcomes.
private final class Inbox: Sendable {
    private let state = Mutex<String?>(nil)
    private let stream: AsyncStream<Result<String, StudIPError>>
    private let continuation: AsyncStream<Result<String, StudIPError>>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(1))
    }

    func expect(_ state: String) { self.state.withLock { $0 = state } }

    func next() async -> Result<String, StudIPError>? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }

    func finish() { continuation.finish() }

    /// The page for the browser, after passing the callback's outcome on.
    func receive(_ uri: String) -> (HTTPResponseStatus, String) {
        guard let components = URLComponents(string: uri), components.path == "/callback" else {
            return (.notFound, "Not found.")
        }
        guard let state = state.withLock({ $0 }) else {
            return (.serviceUnavailable, "CampusFS is not waiting for a login.")
        }
        do throws(StudIPError) {
            let code = try OAuth2Authorization.code(
                fromQuery: components.queryItems ?? [], state: state, server: "the browser's redirect")
            continuation.yield(.success(code))
            return (.ok, "Logged in. You can close this page and return to the terminal.")
        } catch {
            continuation.yield(.failure(error))
            return (.badRequest, "The login did not succeed: \(error). Return to the terminal.")
        }
    }
}

/// Answers each request with the page ``Inbox`` chooses, then closes the connection.
private final class CallbackHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    private let inbox: Inbox
    private var uri: String?

    init(inbox: Inbox) { self.inbox = inbox }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): uri = head.uri
        case .body: break
        case .end:
            let (status, text) = inbox.receive(uri ?? "")
            let html =
                "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>CampusFS</title></head>"
                + "<body><p>\(Self.escaped(text))</p></body></html>"
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
            headers.add(name: "Content-Length", value: "\(html.utf8.count)")
            headers.add(name: "Connection", value: "close")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: html)))), promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    private static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }
}
