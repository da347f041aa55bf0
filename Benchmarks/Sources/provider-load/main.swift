// Curlew — the provider's overhead over the bare engine, and ApiResult decoding over bare JSONDecoder.
//
// usage: provider-load BASE_URL (serving /small: a ~100-byte JSON object)
// Runs engine and provider interleaved (E P E P E P), 10,000 GETs at 64 in flight each, and reports the
// median requests/s of each; then decodes the same body N times through ApiResult and JSONDecoder.
import Curlew
import Foundation

struct Small: Decodable, Sendable {
    let id: Int
    let name: String
    let tags: [String]
    let active: Bool
    let score: Double
    let note: String
}

struct Bench: TargetType {
    let baseURL: URL
    var path: String { "/small" }
    var method: HTTPRequest.Method { .get }
    var task: RequestTask { .requestPlain }
    var headers: [String: String]? { nil }
}

let base = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "http://127.0.0.1:18090"
guard let baseURL = URL(string: base) else { exit(2) }
let session = try CurlSession()
let provider = Provider<Bench>(session: session)
let target = Bench(baseURL: baseURL)
let request = TransportRequest(url: base + "/small")
let total = 10_000
let concurrency = 64

func run(_ label: String, _ one: @escaping @Sendable () async throws -> Int) async throws -> Double {
    let start = ContinuousClock.now
    let bytes = try await withThrowingTaskGroup(of: Int.self) { group in
        for worker in 0..<concurrency {
            let count = total / concurrency + (worker < total % concurrency ? 1 : 0)
            group.addTask {
                var sum = 0
                for _ in 0..<count { sum += try await one() }
                return sum
            }
        }
        return try await group.reduce(0, +)
    }
    let elapsed = ContinuousClock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    precondition(bytes == total * 106, "\(label): wrong byte count \(bytes)")
    return Double(total) / seconds
}

var engineRates: [Double] = []
var providerRates: [Double] = []
var typedRates: [Double] = []
var engineDecodeRates: [Double] = []
// Four clients, rotated each round so no client always runs first.
let clients: [(String, @Sendable () async throws -> Int)] = [
    ("engine", { try await session.execute(request).body.count }),
    ("provider", { try await provider.request(target).data.count }),
    ("engine+JSONDecoder", {
        let body = try await session.execute(request).body
        _ = try JSONDecoder().decode(Small.self, from: body)
        return body.count
    }),
    ("provider ApiResult", {
        let result = try await provider.request(target, as: Small.self)
        return result.value == nil ? 0 : result.response.data.count
    }),
]
var rates: [String: [Double]] = [:]
for round in 0..<5 {
    for index in 0..<clients.count {
        let (name, client) = clients[(index + round) % clients.count]
        rates[name, default: []].append(try await run(name, client))
    }
}
engineRates = rates["engine"] ?? []
providerRates = rates["provider"] ?? []
engineDecodeRates = rates["engine+JSONDecoder"] ?? []
typedRates = rates["provider ApiResult"] ?? []
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
print(String(format: "engine.execute            %8.0f req/s  (runs: %@)", median(engineRates), engineRates.map { String(format: "%.0f", $0) }.joined(separator: ", ")))
print(String(format: "provider.request          %8.0f req/s  (%.2fx engine)", median(providerRates), median(providerRates) / median(engineRates)))
print(String(format: "engine + JSONDecoder      %8.0f req/s", median(engineDecodeRates)))
print(String(format: "provider.request(as:)     %8.0f req/s  (%.2fx engine + JSONDecoder)", median(typedRates), median(typedRates) / median(engineDecodeRates)))

// Decoding alone, same body, same decoder type.
let body = try await session.execute(request).body
let response = ApiResponse(statusCode: 200, data: body)
let iterations = 100_000
let decoder = JSONDecoder()
var bare = Duration.zero
var typed = Duration.zero
for _ in 0..<3 {
    var start = ContinuousClock.now
    for _ in 0..<iterations { _ = try decoder.decode(Small.self, from: body) }
    bare = bare == .zero ? ContinuousClock.now - start : min(bare, ContinuousClock.now - start)
    start = ContinuousClock.now
    for _ in 0..<iterations { _ = try ApiResult<Small, ApiErrorMessage>.decode(from: response, using: decoder) }
    typed = typed == .zero ? ContinuousClock.now - start : min(typed, ContinuousClock.now - start)
}
func micros(_ duration: Duration) -> Double {
    (Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12) / Double(iterations)
}
print(String(format: "decode: JSONDecoder %.2f us, ApiResult.decode %.2f us (%.2fx)", micros(bare), micros(typed), micros(typed) / micros(bare)))
await session.shutdown()
