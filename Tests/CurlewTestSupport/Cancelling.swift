// Curlew — cancelling an operation once it has reached a point the test chooses.

/// Runs `operation` in a child task, cancels that task once `started` yields (or ends), and returns what
/// the operation threw: nil when it returned.
public func errorAfterCancelling(
    once started: AsyncStream<Void>, _ operation: @escaping @Sendable () async throws -> Void
) async -> (any Error)? {
    await withTaskGroup(of: (any Error)?.self) { group in
        group.addTask {
            do {
                try await operation()
                return nil
            } catch {
                return error
            }
        }
        for await _ in started { break }
        group.cancelAll()
        return await group.next() ?? nil
    }
}
