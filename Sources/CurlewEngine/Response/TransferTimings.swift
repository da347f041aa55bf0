// Curlew — curl's per-transfer timings.

/// When each phase of a transfer completed, measured from the start of the transfer.
///
/// The values are cumulative, as curl reports them: ``connect`` includes ``nameLookup``, and so on.
/// A phase that did not happen (a reused connection needs no lookup or connect; plain HTTP has no
/// TLS handshake) is zero.
public struct TransferTimings: Sendable, Hashable {
    /// Name resolution finished.
    public var nameLookup: Duration
    /// The TCP connection was established.
    public var connect: Duration
    /// The TLS handshake finished (zero for plain HTTP).
    public var tlsHandshake: Duration
    /// The first response byte arrived (time to first byte).
    public var firstByte: Duration
    /// The whole transfer finished.
    public var total: Duration
    /// Time spent waiting in the session's admission queue for a free connection, over every hop.
    /// Not part of the other figures, which start when the final hop's transfer started.
    public var queued: Duration
    /// Time spent on earlier hops of a redirected request, before the final hop was submitted.
    public var redirect: Duration

    /// Creates timings from their parts.
    public init(
        nameLookup: Duration, connect: Duration, tlsHandshake: Duration, firstByte: Duration, total: Duration,
        queued: Duration = .zero, redirect: Duration = .zero
    ) {
        self.nameLookup = nameLookup
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.firstByte = firstByte
        self.total = total
        self.queued = queued
        self.redirect = redirect
    }

    /// All-zero timings, for responses that never crossed the network (stubs).
    public static let zero = TransferTimings(
        nameLookup: .zero, connect: .zero, tlsHandshake: .zero, firstByte: .zero, total: .zero)
}
