// Event streams: server-sent events from a session and from a provider, typed events from a language
// model's stream, resuming with Last-Event-ID (and with a GET, as MCP does), retryable statuses,
// cancellation, errors, and the parser on its own.

// snippet.hide
import Curlew
import CurlewTesting
import Foundation
import Synchronization

/// A 200 `text/event-stream` answer. Every stream starts with a short `retry`, so that the snippet's
/// reconnections take milliseconds instead of the default 3 s.
func eventStream(_ text: String) -> ServerReply {
    .respond(status: 200, headers: [("Content-Type", "text/event-stream")], body: Array(("retry: 10\n\n" + text).utf8))
}

let busyAnswers = Mutex(0)
let server = try await LocalHTTPServer.start { request in
    switch (request.method, request.path, request.header("Last-Event-ID")) {
    // A feed whose first connection ends after two events and whose second ends after one more; then
    // the server has nothing more to say (204).
    case ("GET", "/ticks", nil): eventStream("id: 1\ndata: 101.25\n\nid: 2\nevent: halt\ndata: trading paused\n\n")
    case ("GET", "/ticks", "2"): eventStream("id: 3\ndata: 101.50\n\n")
    case ("GET", "/ticks", _): .respond(status: 204)
    // MCP: a POST whose answer stream drops after a progress notification, resumed with a GET.
    case ("POST", "/mcp", nil):
        eventStream("id: 41\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":50}}\n\n")
    case ("GET", "/mcp", "41"):
        eventStream("id: 42\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n")
    case (_, "/mcp", _): .respond(status: 204)
    // Overloaded once, then a stream.
    case ("GET", "/busy", nil):
        busyAnswers.withLock { count in
            count += 1
            return count == 1 ? ServerReply.respond(status: 503, headers: [("Retry-After", "1")]) : eventStream("id: 1\ndata: ready\n\n")
        }
    case ("GET", "/busy", _): .respond(status: 204)
    // A stream that never ends: a comment and a tick every 20 ms.
    case ("GET", "/live", _):
        .drip(
            head: Array("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n".utf8),
            chunk: Array(": heartbeat\n\ndata: tick\n\n".utf8), interval: .milliseconds(20), count: 100_000, after: .close)
    default: .html("<h1>Welcome</h1>")
    }
}
let ticksURL = server.url("/ticks")
let liveURL = server.url("/live")
let feedURL = server.url("/busy")
// snippet.show

// snippet.session
let session = try CurlSession()

var prices: [ServerSentEvents.Event] = []
do {
    // Reconnects when a connection ends or fails, sending the last event ID as `Last-Event-ID`.
    for try await event in session.events(for: TransportRequest(url: ticksURL)) {
        print("\(event.type) #\(event.id): \(event.data)")  // message #1: 101.25, halt #2: trading paused, ...
        prices.append(event)
    }
} catch EventStreamError.noContent {
    print("the server answered 204: the stream is over and is not reconnected")
} catch {
    print("the stream failed: \(error)")
}
// snippet.end
precondition(prices.map(\.id) == ["1", "2", "3"] && prices[1].type == "halt")
precondition(server.requests.filter { $0.path == "/ticks" }.map { $0.header("Last-Event-ID") } == [nil, "2", "3"])

// snippet.resume
// Resuming from an ID saved earlier; this feed's heartbeat comes every 60 s, so it may stay quiet for
// 5 minutes before the connection counts as dead (the policy's 120 s otherwise).
var request = TransportRequest(url: ticksURL)
request.options.idleTimeout = .seconds(300)
do {
    for try await event in session.events(for: request, lastEventID: "2") {
        print("after #2: #\(event.id) \(event.data)")  // #3 101.50
    }
} catch EventStreamError.noContent {
} catch {
    print("the stream failed: \(error)")
}
// snippet.end

// snippet.provider
enum Market: TargetType {
    case ticks

    var baseURL: URL { URL(string: "https://market.example")! }
    var path: String { "/ticks" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { ["Authorization": "Bearer market-token"] }
}

let market = Provider<Market>(
    // snippet.hide
    endpointClosure: server.endpointMapping(),
    // snippet.show
    session: session)
do {
    // Every connection attempt runs the provider's stages: endpoint, request closure, plugins, middleware.
    for try await event in market.events(for: .ticks) {
        print("market: #\(event.id) \(event.data)")
    }
} catch CurlewError.eventStream(.noContent) {
    print("market closed")
} catch {
    print("the stream failed: \(error)")
}
// snippet.end

// snippet.typed-target
/// A chat completion request that asks for a stream.
struct ChatRequest: Encodable, Sendable {
    struct Message: Encodable, Sendable { let role: String; let content: String }
    let model: String
    let messages: [Message]
    let stream = true
}

enum Assistant: TargetType {
    case complete(prompt: String)

    var baseURL: URL { URL(string: "https://llm.example/v1")! }
    var path: String { "/chat/completions" }
    var method: HTTPRequest.Method { .post }
    var task: RequestTask {
        switch self {
        case .complete(let prompt):
            .requestJSONEncodable(ChatRequest(model: "small", messages: [.init(role: "user", content: prompt)]))
        }
    }
    var headers: [String: String]? { ["Authorization": "Bearer llm-token"] }
    // What such an API streams: one JSON chunk per event, comments to keep the connection alive, and a
    // last event that is not JSON.
    var sampleData: Data {
        Data(
            """
            data: {"choices":[{"delta":{"role":"assistant"}}]}

            data: {"choices":[{"delta":{"content":"Hel"}}]}

            : keep-alive

            data: {"choices":[{"delta":{"content":"lo"}}]}

            data: [DONE]


            """.utf8)
    }
}

/// One streamed chunk of a completion.
struct CompletionChunk: Decodable, Sendable {
    struct Choice: Decodable, Sendable {
        struct Delta: Decodable, Sendable { let content: String? }
        let delta: Delta
    }
    let choices: [Choice]
}
// snippet.end

// snippet.typed
let assistant = Provider<Assistant>(stubClosure: Provider.immediatelyStub)
// A completion cannot be resumed (reconnecting would ask again), so this stream does not reconnect.
let once = EventStreamPolicy(reconnects: false)
var reply = ""
chunks: for try await chunk in assistant.events(for: .complete(prompt: "Say hello"), as: CompletionChunk.self, policy: once) {
    switch chunk.result {
    case .success(let completion):
        reply += completion.choices.first?.delta.content ?? ""
    case .failure where chunk.event.data == "[DONE]":
        break chunks
    case .failure(let error):
        // With `undecodable: .report` (the default) an event that does not decode is an element, and
        // the stream goes on; `.fail` would end it with the error.
        print("not a completion chunk: \(error)")
    }
}
print(reply)  // Hello
// snippet.end
precondition(reply == "Hello")

// snippet.reconnect-target
/// A JSON-RPC call to an MCP server.
struct ToolCall: Encodable, Sendable {
    struct Params: Encodable, Sendable { let name: String }
    let jsonrpc = "2.0"
    let id: Int
    let method = "tools/call"
    let params: Params
}

enum MCPServer: TargetType {
    case call(ToolCall)
    case resume

    var baseURL: URL { URL(string: "https://tools.example")! }
    var path: String { "/mcp" }
    var method: HTTPRequest.Method {
        switch self {
        case .call: .post
        case .resume: .get
        }
    }
    var task: RequestTask {
        switch self {
        case .call(let call): .requestJSONEncodable(call)
        case .resume: .requestPlain
        }
    }
    var headers: [String: String]? { ["Mcp-Session-Id": "1868a90c"] }
}

let tools = Provider<MCPServer>(
    // snippet.hide
    endpointClosure: server.endpointMapping(),
    // snippet.show
    session: session)
let call = ToolCall(id: 1, params: .init(name: "index"))
var messages: [String] = []
do {
    // The first attempt POSTs the call; every reconnection GETs the same endpoint with `Last-Event-ID`.
    for try await message in tools.events(for: .call(call), reconnectTarget: { _ in .resume }) {
        messages.append(message.data)
    }
} catch CurlewError.eventStream(.noContent) {
} catch {
    print("the stream failed: \(error)")
}
// snippet.end
precondition(messages.count == 2 && messages[1].contains(#""result""#))
precondition(server.requests.filter { $0.path == "/mcp" }.map(\.method) == ["POST", "GET", "GET"])

// snippet.policy
var patient = EventStreamPolicy()
patient.retryableStatuses = EventStreamPolicy.overloadStatuses  // 429, 502, 503, 504: wait, then reconnect
patient.reconnectionTime = .seconds(1)                           // until the server sends `retry`
patient.maxConsecutiveFailures = 10                              // then the last failure is thrown
var ready: [ServerSentEvents.Event] = []
do {
    for try await event in session.events(for: TransportRequest(url: feedURL), policy: patient) {
        ready.append(event)  // after the 503 and its Retry-After: 1
    }
} catch EventStreamError.noContent {
} catch {
    print("the stream failed: \(error)")
}
// snippet.end
precondition(ready.map(\.data) == ["ready"])

// snippet.cancel
let listener = Task {
    var ticks = 0
    do throws(EventStreamError) {
        for try await _ in session.events(for: TransportRequest(url: liveURL)) { ticks += 1 }
    } catch .transport(let error) where error.code == .cancelled {
        // The task was cancelled: the transfer is aborted and its connection closed at once.
    } catch {
        print("the stream failed: \(error)")
    }
    return ticks
}
try await Task.sleep(for: .milliseconds(200))
listener.cancel()
print("\(await listener.value) ticks before the listener was cancelled")
// snippet.end

// snippet.activity
// The same stream with its comments and reconnections; `close()` ends it from another task.
let live = session.events(for: TransportRequest(url: liveURL))
let watcher = Task {
    var heartbeats = 0
    var ticks = 0
    for try await item in live.activity {
        switch item {
        case .event: ticks += 1
        case .comment: heartbeats += 1  // ": heartbeat"
        case .reconnecting(let reconnection): print("reconnecting in \(reconnection.delay): \(reconnection.cause)")
        }
    }
    return (heartbeats, ticks)  // the loop ends without an error once the stream is closed
}
try await Task.sleep(for: .milliseconds(200))
live.close()
let (heartbeats, ticks) = try await watcher.value
print("\(ticks) ticks and \(heartbeats) heartbeats before the stream was closed")
// snippet.end

// snippet.errors
enum Site: TargetType {
    case home
    var baseURL: URL { URL(string: "https://www.example")! }
    var path: String { "/" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

func explain(_ error: CurlewError) -> String {
    switch error {
    case .eventStream(.noContent): "done: the server has nothing more to send"
    case .eventStream(.unexpectedStatus(let status)): "refused with status \(status)"
    case .eventStream(.unexpectedContentType(let type)): "not an event stream: \(type ?? "no Content-Type")"
    case .eventStream(.lineTooLong(let limit)), .eventStream(.eventTooLarge(let limit)): "over the \(limit)-byte limit"
    case .eventStream(.bodyNotReplayable): "cannot reconnect: the request body cannot be sent again"
    case .eventStream(.transport(let failure)) where failure.code == .cancelled: "cancelled"
    case .eventStream(.transport(let failure)): "gave up after \(failure.code)"  // not worth reconnecting, or too many failures
    default: error.description  // a request closure, a plugin or a middleware failed
    }
}

let site = Provider<Site>(
    // snippet.hide
    endpointClosure: server.endpointMapping(),
    // snippet.show
    session: session)
do throws(CurlewError) {
    for try await _ in site.events(for: .home) {}
} catch {
    print(explain(error))  // not an event stream: text/html; charset=utf-8
}
// snippet.end

// snippet.parser
// The bytes of a stream, fed one at a time: the events are the same as when they come all at once.
let wire = Array("\u{FEFF}: a comment\nid: 7\r\ndata: café\rdata:  two spaces\n\nid\ndata\n\nretry: 2500\nevent: done\n\nid: 8\n\ndata: cut off".utf8)
var parser = EventStreamParser()
var parsed: [ServerSentEvents.Event] = []
for index in wire.indices {
    try parser.parse(wire[index...index], into: &parsed)
}
parser.finish()  // the stream ended: "cut off" had no empty line after it and is discarded
precondition(parsed == [
    // The BOM is stripped; CRLF and CR end lines; one space after the colon is removed.
    ServerSentEvents.Event(data: "café\n two spaces", id: "7"),
    // A bare `id` clears the ID; a bare `data` is an empty value, and the event is dispatched.
    ServerSentEvents.Event(data: "", id: ""),
])
// `event: done` without data dispatched nothing; `id: 8` alone set the ID a reconnection sends.
precondition(parser.reconnectionTime == .milliseconds(2500) && parser.lastEventID == "8")
// snippet.end
precondition(Curlew.ServerSentEvents.Event.self == CurlewEngine.ServerSentEvents.Event.self)

// snippet.hide
await session.shutdown()
try await server.shutdown()
