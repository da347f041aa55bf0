// Curlew — waiting for a condition, and cleaning up after a body that may throw.

/// Polls `condition` every 10 ms for up to `seconds`; returns whether it became true. The default bound
/// is generous because it only matters when a test fails: the sanitizer build on a loaded 2-core
/// machine can take several seconds for what is otherwise instant.
package func eventually(within seconds: Double = 20, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Runs `body`, then `cleanUp` whether `body` returned or threw (`defer` cannot await).
package func ensuring<T>(_ body: () async throws -> T, cleanUp: () async -> Void) async throws -> T {
    do {
        let result = try await body()
        await cleanUp()
        return result
    } catch {
        await cleanUp()
        throw error
    }
}
