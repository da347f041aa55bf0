// Curlew — one connection of the loopback test server: read requests, write replies or faults.

import NIOCore
import NIOHTTP1
import NIOPosix

/// Collects each request, runs the handler off the event loop, and writes the reply as raw bytes
/// (so faults can be exact). Confined to the channel's event loop.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart

    private let state: ServerState
    private let handler: LocalHTTPServer.Handler
    private var connectionID = 0
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// The previous request's work, so replies on one connection stay in order.
    private var previous: Task<Void, Never>?

    init(state: ServerState, handler: @escaping LocalHTTPServer.Handler) {
        self.state = state
        self.handler = handler
    }

    func channelActive(context: ChannelHandlerContext) {
        connectionID = state.connectionOpened()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.connectionClosed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Malformed requests and resets by the client end the connection.
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            body = []
            if requestHead.headers["Expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                context.writeAndFlush(wrapOutbound(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)), promise: nil)
            }
        case .body(var buffer):
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let requestHead = head else { return }
            head = nil
            let request = ServerRequest(
                method: requestHead.method.rawValue, uri: requestHead.uri,
                headers: requestHead.headers.map { (name: $0.name, value: $0.value) }, body: body,
                connectionID: connectionID)
            body = []
            state.record(request)
            let closeAfter = !requestHead.isKeepAlive
            previous = Self.answer(
                request, after: previous, handler: handler, channel: context.channel, closeAfter: closeAfter, state: state)
        }
    }

    /// Runs the handler off the event loop, after the previous request of the connection is answered.
    private static func answer(
        _ request: ServerRequest, after previous: Task<Void, Never>?, handler: @escaping LocalHTTPServer.Handler,
        channel: any Channel, closeAfter: Bool, state: ServerState
    ) -> Task<Void, Never>? {
        state.startAnswer {
            if let previous { await previous.value }
            let reply = await handler(request)
            await send(reply, on: channel, isHead: request.method == "HEAD", closeAfter: closeAfter)
        }
    }

    private func wrapOutbound(_ bytes: [UInt8]) -> NIOAny {
        NIOAny(ByteBuffer(bytes: bytes))
    }

    /// Writes a reply; faults write their bytes exactly as given.
    static func send(_ reply: ServerReply, on channel: any Channel, isHead: Bool, closeAfter: Bool) async {
        switch reply {
        case .respond(let status, let headers, let body):
            var fields = headers
            let framed = headers.contains { ["content-length", "transfer-encoding"].contains($0.0.lowercased()) }
            if !framed { fields.append(("Content-Length", "\(body.count)")) }
            if closeAfter { fields.append(("Connection", "close")) }
            await write(ResponseBytes.head(status: status, headers: fields) + (isHead ? [] : body), on: channel)
            if closeAfter { try? await channel.close() }
        case .chunked(let status, let headers, let chunks):
            var fields = headers + [("Transfer-Encoding", "chunked")]
            if closeAfter { fields.append(("Connection", "close")) }
            var bytes = ResponseBytes.head(status: status, headers: fields)
            if !isHead { bytes += ResponseBytes.chunked(chunks) }
            await write(bytes, on: channel)
            if closeAfter { try? await channel.close() }
        case .delayed(let delay, let next):
            try? await Task.sleep(for: delay)
            await send(next, on: channel, isHead: isHead, closeAfter: closeAfter)
        case .raw(let bytes, let ending):
            if !bytes.isEmpty { await write(bytes, on: channel) }
            await end(channel, ending)
        case .drip(let head, let chunk, let interval, let count, let ending):
            await write(head, on: channel)
            guard await drip(chunk, every: interval, count: count, on: channel) else { return }
            await end(channel, ending)
        case .hang:
            return
        }
    }

    /// Writes `chunk` `count` times, `interval` apart, paced by the channel's event loop rather than the
    /// task pool, so a busy pool in the process under test never holds the drips back. Returns whether
    /// every chunk was written (false once the connection closed).
    private static func drip(_ chunk: [UInt8], every interval: Duration, count: Int, on channel: any Channel) async -> Bool {
        let loop = channel.eventLoop
        let done = loop.makePromise(of: Bool.self)
        let (seconds, attoseconds) = interval.components
        let delay = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        @Sendable func next(_ remaining: Int) {
            guard remaining > 0 else { return done.succeed(true) }
            let scheduled = loop.scheduleTask(in: delay) {
                guard channel.isActive else { return done.succeed(false) }
                channel.writeAndFlush(ByteBuffer(bytes: chunk), promise: nil)
                next(remaining - 1)
            }
            // Stopping the server cancels the next write: the wait ends rather than holding this task (and
            // the channel) for good.
            scheduled.futureResult.whenFailure { _ in done.succeed(false) }
        }
        loop.submit { next(count) }.whenFailure { _ in done.succeed(false) }
        return (try? await done.futureResult.get()) ?? false
    }

    private static func write(_ bytes: [UInt8], on channel: any Channel) async {
        try? await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    private static func end(_ channel: any Channel, _ ending: RawEnding) async {
        switch ending {
        case .keepOpen:
            return
        case .close:
            try? await channel.close()
        case .reset:
            // SO_LINGER with a zero timeout makes close() send RST instead of FIN.
            if let provider = channel as? any SocketOptionProvider {
                try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            }
            try? await channel.close()
        }
    }
}

/// Serialises response heads and chunked bodies.
enum ResponseBytes {
    static func head(status: Int, headers: [(String, String)]) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(reason(status))\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    static func chunked(_ chunks: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for chunk in chunks where !chunk.isEmpty {
            bytes += Array((String(chunk.count, radix: 16) + "\r\n").utf8) + chunk + [0x0D, 0x0A]
        }
        return bytes + Array("0\r\n\r\n".utf8)
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
