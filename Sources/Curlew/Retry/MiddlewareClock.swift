// Curlew — the time middleware reads and waits on, replaceable in tests.

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The time a middleware reads and waits on: monotonic instants for deadlines and waits, the wall
/// clock for HTTP dates (`Retry-After`). Tests give a clock that advances without sleeping.
public protocol MiddlewareClock: Sendable {
    /// The current monotonic instant.
    var now: ContinuousClock.Instant { get }
    /// The current wall-clock time.
    var date: Date { get }
    /// Waits for `duration`.
    ///
    /// - Throws: `CancellationError` at once when the calling task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The system's clocks: `ContinuousClock` and `Date()`.
public struct SystemMiddlewareClock: MiddlewareClock {
    public init() {}
    public var now: ContinuousClock.Instant { .now }
    public var date: Date { Date() }
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

extension MiddlewareClock where Self == SystemMiddlewareClock {
    /// The system's clocks.
    public static var system: SystemMiddlewareClock { SystemMiddlewareClock() }
}
