// Curlew — a real HTTP/1.1 server on loopback for tests and demos.

import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 server on 127.0.0.1, started in-process on port 0 and stopped by ``shutdown()``.
///
/// Every request is read completely and handed to an async handler, whose ``ServerReply`` may be a
/// normal response or a byte-level fault (a lying `Content-Length`, a close or reset mid-body, a
/// stall). Handlers run concurrently; replies on one connection keep their order.
public final class LocalHTTPServer: Sendable {
    /// Answers one request.
    public typealias Handler = @Sendable (ServerRequest) async -> ServerReply

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    let state: ServerState

    /// The port the server listens on.
    public let port: Int

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The base URL followed by `path`.
    public func url(_ path: String) -> String { baseURL + path }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, state: ServerState, port: Int) {
        self.group = group
        self.channel = channel
        self.state = state
        self.port = port
    }

    /// Starts listening and routes every request through `handler`.
    public static func start(host: String = "127.0.0.1", port: Int = 0, handler: @escaping Handler) async throws
        -> LocalHTTPServer
    {
        try await start(handler: handler) { bootstrap in try await bootstrap.bind(host: host, port: port).get() }
    }

    /// Starts listening on a Unix domain socket at `path` (removed first if it exists) and routes every
    /// request through `handler`. ``port`` is 0; reach it with a request whose transfer options name
    /// the socket.
    public static func start(unixSocketPath path: String, handler: @escaping Handler) async throws -> LocalHTTPServer {
        try await start(handler: handler) { bootstrap in
            try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
        }
    }

    private static func start(
        handler: @escaping Handler, bind: (ServerBootstrap) async throws -> any Channel
    ) async throws -> LocalHTTPServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let state = ServerState()
        do {
            let bootstrap = ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.backlog, value: 8192)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                        try channel.pipeline.syncOperations.addHandler(ConnectionHandler(state: state, handler: handler))
                    }
                }
            let channel = try await bind(bootstrap)
            return LocalHTTPServer(group: group, channel: channel, state: state, port: channel.localAddress?.port ?? 0)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Closes the listener and every connection. Calling it again does nothing.
    public func shutdown() async throws {
        guard state.markStopped() else { return }
        try? await channel.close()
        // A reply written once the event loop has stopped never completes its write, and would hold its
        // task (and the connection) for good: replies still being made are cancelled and given a few
        // seconds to end while the loop still runs.
        for answer in state.answersInProgress() { answer.cancel() }
        let deadline = ContinuousClock.now + .seconds(5)
        while state.answersRunning > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        try await group.shutdownGracefully()
    }

    /// A snapshot of the server's counters.
    public var statistics: ServerStatistics { state.statistics }

    /// Every request received so far, in order (the most recent 10,000).
    public var requests: [ServerRequest] { state.requests }

    /// Forgets the recorded requests (counters are kept).
    public func resetRecording() { state.resetRecording() }

}

/// The server's shared counters and recordings.
final class ServerState: Sendable {
    private struct Values {
        var statistics = ServerStatistics()
        var requests: [ServerRequest] = []
        var stopped = false
        /// Replies being made, by number: ``LocalHTTPServer/shutdown()`` ends them before the loop stops.
        var answers: [Int: Task<Void, Never>] = [:]
        var answersStarted = 0
    }

    // NIO's lock is a pthread mutex, which the thread sanitizer understands (unlike the futex of `Mutex`).
    private let values = NIOLockedValueBox(Values())

    var statistics: ServerStatistics { values.withLockedValue { $0.statistics } }
    var requests: [ServerRequest] { values.withLockedValue { $0.requests } }

    func resetRecording() { values.withLockedValue { $0.requests.removeAll() } }

    func markStopped() -> Bool {
        values.withLockedValue { values in
            defer { values.stopped = true }
            return !values.stopped
        }
    }

    /// Runs `answer` as a task the server's shutdown can end; nil once the server is stopping. The task
    /// is entered under the lock its end takes, so it always leaves the table after joining it.
    func startAnswer(_ answer: @escaping @Sendable () async -> Void) -> Task<Void, Never>? {
        values.withLockedValue { values in
            guard !values.stopped else { return nil }
            let number = values.answersStarted
            values.answersStarted += 1
            let task = Task {
                await answer()
                self.answerEnded(number)
            }
            values.answers[number] = task
            return task
        }
    }

    private func answerEnded(_ number: Int) {
        values.withLockedValue { _ = $0.answers.removeValue(forKey: number) }
    }

    /// The replies being made (shutdown).
    func answersInProgress() -> [Task<Void, Never>] {
        values.withLockedValue { Array($0.answers.values) }
    }

    var answersRunning: Int { values.withLockedValue { $0.answers.count } }

    func connectionOpened() -> Int {
        values.withLockedValue { values in
            values.statistics.connectionsAccepted += 1
            values.statistics.connectionsOpen += 1
            values.statistics.peakConnectionsOpen = max(values.statistics.peakConnectionsOpen, values.statistics.connectionsOpen)
            return values.statistics.connectionsAccepted
        }
    }

    func connectionClosed() {
        values.withLockedValue { values in
            values.statistics.connectionsOpen -= 1
            values.statistics.connectionsClosed += 1
        }
    }

    func record(_ request: ServerRequest) {
        values.withLockedValue { values in
            values.statistics.requestsReceived += 1
            if values.requests.count >= 10_000 { values.requests.removeFirst(1000) }
            values.requests.append(request)
        }
    }
}
