// Curlew — one transfer's part in its key's connections, as the connection ledger decides on it.

extension ConnectionLedger {
    /// One transfer's part in its key's connections: what the machine admitted it to do about them
    /// (``ConnectionRole``) until that is settled, and what curl has done with it.
    ///
    /// The caller keeps it beside the transfer (the loop in `TransferContext.connection`), not the
    /// ledger: every callback reaches the transfer through the pointer curl hands back, where a table
    /// here would cost a lookup per transfer and callback. The ledger's methods decide on it.
    struct Transfer: Sendable, Equatable {
        /// The machine's identifier of the transfer.
        let id: TransferID
        /// Admitted to open the key's next connection; settled once its response arrives or it ends.
        var opensConnection: Bool
        /// Admitted to probe for one stream more; settled once curl places it (on a connection, or on one
        /// it opens) or it ends.
        var probes: Bool
        /// Counted in its key's ``Record/attached`` (until it ends).
        var attached = false
        /// curl opened a socket for it: a new connection rather than a reused one.
        var openedSocket = false

        /// A transfer the machine started with `role`.
        init(id: TransferID, role: ConnectionRole) {
            self.id = id
            opensConnection = role == .opens
            probes = role == .probes
        }
    }
}
