// Curlew benchmarks — bench-openapi's workloads: a generated-client operation at the suite's concurrency
// and request counts (BenchCore's `Workload`, run by BenchCore's runner).

import BenchCore

/// One of bench-openapi's workloads: a generated-client operation, run at the concurrency and request
/// count of the suite's workload it mirrors.
struct OpenAPIWorkload: Sendable {
    enum Operation: Sendable {
        /// `getGreeting(query: .init(name: "Stranger"))`: `{"message":"Hello, Stranger!"}`.
        case greeting
        /// `download(query: .init(size:))`: the body read chunk by chunk, counted, never collected.
        case download(size: Int)
    }

    let operation: Operation
    /// The suite's workload it mirrors, renamed, with the body bytes each response carries.
    let base: Workload
    var concurrency: Int { base.concurrency }
    var requests: Int { base.requests }

    /// The JSON nginx answers `/greet` with, and what it must decode to.
    static let greetingBody = #"{"message":"Hello, Stranger!"}"#
    static let greeting = "Hello, Stranger!"

    /// The workload `name`, its counts taken from the suite's workload it mirrors (`scale` as there).
    static func named(_ name: String, scale: Double) -> OpenAPIWorkload? {
        let mirrors = ["openapi-get-1": "small-get-1", "openapi-get-64": "small-get-64", "openapi-download-256m": "stream-download-256m"]
        guard let base = mirrors[name].flatMap({ Workload.named($0, scale: scale) }) else { return nil }
        let operation: Operation = base.streamsResponse ? .download(size: base.expectedBytes) : .greeting
        let bytes = base.streamsResponse ? base.expectedBytes : greetingBody.utf8.count
        return OpenAPIWorkload(operation: operation, base: base.mirrored(as: name, expectedBytes: bytes))
    }
}
