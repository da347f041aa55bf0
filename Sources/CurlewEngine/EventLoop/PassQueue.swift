// Curlew — what curl's callbacks learned in one pass of the loop, acted on once curl has returned.

/// What curl's callbacks learned during one pass of the loop: acting on it inside a callback is not
/// allowed (starting or pausing transfers) or would wake a task once per delivery instead of once per
/// pass. Loop thread only.
struct PassQueue {
    /// What callbacks learned about transfers (pauses, streamed heads), told to the machine once curl
    /// returns.
    var transferEvents: [TransferEvent] = []
    /// What the connection ledger concluded from callbacks about keys, told to the machine once curl
    /// returns.
    var connectionFindings: [LoopThread.Ledger.Finding] = []
    /// Streamed responses whose waiting reader has something new: resumed together at the end of the
    /// pass. (A stream body's producer with room again is resumed at once by the read callback.)
    var responseWakes: [Exchange] = []
    /// Transfers whose request body curl took to its end this pass (see `LoopThread.runAfterUploadEnds()`).
    var uploadEnds: [TransferContext] = []
    /// Streamed HTTP/2 responses whose trailers arrived this pass: their body ends at the end of it.
    var trailerEnds: [TransferContext] = []
    /// Uploads over HTTP/2 whose response moved this pass, to see whether it is whole before the request
    /// body (see `LoopThread.watchEarlyAnswers()`).
    var earlyAnswers: [TransferContext] = []
}
