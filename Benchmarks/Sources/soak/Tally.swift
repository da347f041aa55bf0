// Curlew — the soak's counts: iterations per scenario, failures per error code, and what should not have
// happened.
import CurlewEngine
import Synchronization

/// Counts shared by the workers (one mutex: a few increments per request).
final class Tally: Sendable {
    struct Counts: Sendable {
        var byScenario: [String: Int] = [:]
        /// Seconds spent per scenario, summed over workers.
        var timeByScenario: [String: Double] = [:]
        /// The longest one, per scenario.
        var longestByScenario: [String: Double] = [:]
        var errors: [String: Int] = [:]
        var unexpected = 0
        var examples: [String] = []
    }

    private let counts = Mutex(Counts())

    func count(_ scenario: String, seconds: Double) {
        counts.withLock {
            $0.byScenario[scenario, default: 0] += 1
            $0.timeByScenario[scenario, default: 0] += seconds
            $0.longestByScenario[scenario] = max($0.longestByScenario[scenario] ?? 0, seconds)
        }
    }

    /// An error a scenario expects (a hostile server's, a cancellation's): counted by code.
    func expected(_ error: any Error) {
        let code = (error as? TransportError).map { "\($0.code)" } ?? "\(type(of: error))"
        counts.withLock { $0.errors[code, default: 0] += 1 }
    }

    /// Something that must not happen: counted, and the first few kept to print.
    func unexpected(_ scenario: String, _ what: String) {
        counts.withLock {
            $0.unexpected += 1
            // A few of each kind (the scenario and the message's start), so one frequent kind does not
            // hide the others.
            let kind = "\(scenario): \(what.prefix(24))"
            if $0.examples.count < 40, $0.examples.filter({ $0.hasPrefix(kind) }).count < 3 {
                $0.examples.append("\(scenario): \(what)")
            }
        }
    }

    func snapshot() -> Counts { counts.withLock { $0 } }
}

/// A small deterministic generator, so a round's choices can be replayed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
