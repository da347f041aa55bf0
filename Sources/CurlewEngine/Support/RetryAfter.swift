// Curlew — a `Retry-After` field value (RFC 9110 §10.2.3) as a wait.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads `Retry-After`: a number of seconds, or an HTTP date (IMF-fixdate, and the obsolete RFC 850
/// and asctime forms recipients must accept, RFC 9110 §5.6.7).
package enum RetryAfter {
    /// The wait `value` asks for at wall-clock time `now`: zero for a date already past; nil when the
    /// value is neither form. Seconds too large for a `Duration` give `.seconds(Int64.max)`.
    package static func delay(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingWhitespace
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return .seconds(Int64(text) ?? Int64.max)
        }
        guard let date = HTTPDate.parse(text, now: now) else { return nil }
        let seconds = date.timeIntervalSince(now)
        return seconds <= 0 ? .zero : .milliseconds(Int64(min(seconds, 9e15) * 1000))
    }
}
