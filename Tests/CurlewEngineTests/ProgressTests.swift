// Curlew — progress as an async sequence, against stream_server.py pacing its bodies: monotonic counts,
// exact totals on the last element (which carries the response), coalescing, unknown totals, compressed
// responses, uploads, and leaving or cancelling the loop cancelling the transfer.

import CurlewEngine
import CurlewTestSupport
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// The elements of a progress sequence iterated to its end, and how long the iteration took.
private struct Collected<Response: Sendable> {
    var updates: [ProgressUpdate<Response>] = []
    /// From the first `next()` (which starts the transfer) to the last element.
    var span: Duration = .zero

    var count: Int { updates.count }
    var last: ProgressUpdate<Response>? { updates.last }
    var progress: [TransferProgress] { updates.map(\.progress) }
}

/// Iterates `updates` to the end.
private func collect<Response: Sendable>(
    _ updates: ProgressUpdates<Response, TransportError>
) async throws(TransportError) -> Collected<Response> {
    var collected = Collected<Response>()
    let start = ContinuousClock.now
    for try await update in updates { collected.updates.append(update) }
    collected.span = .now - start
    return collected
}

/// Checks what holds for every progress sequence that completed: counts and the fraction never fall, the
/// fraction stays within 0...1, only the last element is completed and carries the response.
private func expectWellFormed<Response>(_ collected: Collected<Response>, sourceLocation: SourceLocation = #_sourceLocation) {
    let progress = collected.progress
    for (previous, next) in zip(progress, progress.dropFirst()) {
        #expect(next.bytesSent >= previous.bytesSent, sourceLocation: sourceLocation)
        #expect(next.bytesReceived >= previous.bytesReceived, sourceLocation: sourceLocation)
        #expect(next.decodedBytesReceived >= previous.decodedBytesReceived, sourceLocation: sourceLocation)
        #expect(next.fractionCompleted >= previous.fractionCompleted, sourceLocation: sourceLocation)
    }
    #expect(progress.allSatisfy { (0...1).contains($0.fractionCompleted) }, sourceLocation: sourceLocation)
    #expect(collected.updates.dropLast().allSatisfy { !$0.progress.isCompleted && $0.response == nil }, sourceLocation: sourceLocation)
    #expect(collected.last?.progress.isCompleted == true, sourceLocation: sourceLocation)
    #expect(collected.last?.progress.fractionCompleted == 1, sourceLocation: sourceLocation)
    #expect(collected.last?.response != nil, sourceLocation: sourceLocation)
}

/// Checks the coalescing rule — an update at most every 50 ms, or sooner once the wire bytes moved by 1%
/// of a known total — by counting: the updates before the last were all made while the iteration ran,
/// so at most span / 50 ms + 1 of them came by time, at most 100 by bytes (each needs 1% more), and one
/// more with the counts the body ended with (an update of its own, outside the rule).
/// (The loop's own receive times cannot be compared: it may be late for one update and see the next at
/// once.)
private func expectCoalesced<Response>(
    _ collected: Collected<Response>, totalKnown: Bool, sourceLocation: SourceLocation = #_sourceLocation
) {
    let byTime = Int(collected.span / .milliseconds(50)) + 1
    let allowed = byTime + 1 + (totalKnown ? 100 : 0)
    #expect(collected.count - 1 <= allowed, "\(collected.count - 1) updates in \(collected.span)", sourceLocation: sourceLocation)
}

@Suite struct ProgressTests {
    /// 1 MB in 500 paced writes of 2,000 bytes over about 1.4 s.
    @Test(arguments: Wire.allCases)
    func aDownloadsProgressRisesToExactTotalsAndIsCoalesced(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let received = try await collect(
                session.executeWithProgress(TransportRequest(url: server.url("/file?n=1000000&pace=700000&chunk=2000"))))
            expectWellFormed(received)
            expectCoalesced(received, totalKnown: true)
            #expect(received.count >= 3)
            #expect(received.count < 500 / 3)
            let last = try #require(received.last)
            #expect(last.progress.bytesReceived == 1_000_000)
            #expect(last.progress.expectedBytesToReceive == 1_000_000)
            #expect(last.progress.decodedBytesReceived == 1_000_000)
            #expect(last.progress.bytesSent == 0)
            #expect(received.progress.allSatisfy { $0.expectedBytesToSend == 0 })
            #expect(last.response?.status.code == 200)
            #expect(last.response.map { [UInt8]($0.body) } == streamPattern(count: 1_000_000))
            // Before the end, the fraction is the part received.
            for progress in received.progress.dropLast() where progress.expectedBytesToReceive != nil {
                #expect(progress.fractionCompleted == Double(progress.bytesReceived) / 1_000_000)
            }
        }
    }

    /// Without a length (chunked) the total stays unknown and the fraction 0 until the last element.
    @Test func anUnknownTotalKeepsTheFractionAtZeroUntilTheEnd() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let received = try await collect(
                session.executeWithProgress(TransportRequest(url: server.url("/file?n=300000&length=0&pace=300000&chunk=1000"))))
            expectWellFormed(received)
            expectCoalesced(received, totalKnown: false)
            #expect(received.count >= 3)
            #expect(received.count < 100)
            #expect(received.progress.allSatisfy { $0.expectedBytesToReceive == nil })
            #expect(received.progress.dropLast().allSatisfy { $0.fractionCompleted == 0 })
            #expect(received.progress.dropLast().contains { $0.bytesReceived > 0 })
            let last = try #require(received.last)
            #expect(last.progress.fractionCompleted == 1)
            #expect(last.progress.bytesReceived == 300_000)
            #expect(last.progress.decodedBytesReceived == 300_000)
            #expect(last.response?.body.count == 300_000)
        }
    }

    /// A gzip body with Content-Length: the fraction follows the compressed bytes and never passes 1,
    /// while the decoded count runs far ahead of them.
    @Test func aCompressedResponseCountsWireBytesAgainstItsLength() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let received = try await collect(
                session.executeWithProgress(
                    TransportRequest(url: server.url("/file?n=3000000&encoding=gzip&length=1&pace=12000&chunk=400"))))
            expectWellFormed(received)
            let last = try #require(received.last)
            let response = try #require(last.response)
            let length = try #require(response.headerFields[.contentLength].flatMap { Int($0) })
            #expect(length < 100_000)
            #expect(last.progress.expectedBytesToReceive == length)
            #expect(last.progress.bytesReceived == length)
            #expect(last.progress.decodedBytesReceived == 3_000_000)
            #expect([UInt8](response.body) == streamPattern(count: 3_000_000))
            #expect(received.progress.dropLast().contains { $0.decodedBytesReceived > $0.bytesReceived && $0.bytesReceived > 0 })
        }
    }

    /// An upload's bytes sent reach its length; a stream without one has no expected total. 12 MB to a
    /// server reading 4 MB/s with a small receive buffer: more than the kernel's buffers take at once, so
    /// bytes sent rise while the server reads, for 3 s (with every suite running at once, a 2-core
    /// machine has kept the reading task from running for 1.5 s, and it then saw only the last update).
    @Test(arguments: [true, false])
    func anUploadsProgressReachesTheBodysLength(knownLength: Bool) async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let size = 12_000_000
            let payload = streamPattern(count: size)
            let body: TransportRequest.Body =
                knownLength
                ? .bytes(payload)
                : .stream { writer in
                    for start in stride(from: 0, to: size, by: 100_000) { try await writer.write(payload[start..<(start + 100_000)]) }
                }
            let request = TransportRequest(url: server.url("/trickle?rate=4000000"), method: .post, body: body)
            let received = try await collect(session.executeWithProgress(request))
            expectWellFormed(received)
            expectCoalesced(received, totalKnown: knownLength)
            let last = try #require(received.last)
            #expect(last.progress.bytesSent == size)
            #expect(received.progress.allSatisfy { $0.expectedBytesToSend == (knownLength ? size : nil) })
            let answer = #"{"received": 12000000}"#
            #expect(last.response?.body.text == answer)
            #expect(last.progress.bytesReceived == answer.utf8.count)
            #expect(last.progress.expectedBytesToReceive == answer.utf8.count)
            #expect(received.progress.dropLast().contains { $0.bytesSent > 0 && $0.bytesSent < size })
        }
    }

    /// Counts that arrive inside the coalescing window are reported when it ends, even while the
    /// connection then stays idle: the server sends the head and 1,000 bytes, 1,000 more 10 ms later (inside
    /// the window the first update opened; no length, so only time lets an update through), then waits
    /// until the test has seen `2000/?` before sending the rest (and gives up after 10 s, failing the test).
    @Test(arguments: Wire.allCases)
    func countsHeldBackAreReportedWhileTheTransferStalls(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let key = UUID().uuidString
            var seen: [TransferProgress] = []
            let url = server.url("/steps?key=\(key)&chunks=3&size=1000&free=2&gap=10&length=0&wait=10")
            for try await update in session.executeWithProgress(TransportRequest(url: url)) {
                seen.append(update.progress)
                if update.progress.bytesReceived == 2000, !update.progress.isCompleted {
                    _ = try await session.execute(TransportRequest(url: server.url("/release?key=\(key)-3")))
                }
            }
            #expect(seen.filter { !$0.isCompleted }.map(\.bytesReceived).suffix(2) == [2000, 3000], "\(seen)")
            #expect(seen.last?.isCompleted == true)
            #expect(seen.last?.bytesReceived == 3000)
        }
    }

    /// Moya's expectation for four 1,000-byte chunks of a 4,000-byte body: an update per chunk (none
    /// before a byte moves, the last chunk not folded into the completion), then the completed one.
    @Test(arguments: Wire.allCases)
    func aDownloadReportsEachChunkThenCompletes(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let key = UUID().uuidString
            var seen: [TransferProgress] = []
            for try await update in session.executeWithProgress(TransportRequest(url: server.url("/steps?key=\(key)&chunks=4&size=1000"))) {
                seen.append(update.progress)
                let chunk = update.progress.bytesReceived / 1000
                if !update.progress.isCompleted, chunk < 4 {
                    _ = try await session.execute(TransportRequest(url: server.url("/release?key=\(key)-\(chunk + 1)")))
                }
            }
            #expect(seen.map(\.fractionCompleted) == [0.25, 0.5, 0.75, 1.0, 1.0], "\(seen)")
            #expect(seen.map(\.bytesReceived) == [1000, 2000, 3000, 4000, 4000])
            #expect(seen.map(\.isCompleted) == [false, false, false, false, true])
        }
    }

    /// An upload's fraction follows its body before the response head: the server reads 1 MB of the 4 MB
    /// body and holds the rest until the test has seen a fraction that is the part sent.
    @Test func anUploadsFractionFollowsItsBodyBeforeTheHead() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let key = UUID().uuidString
            let size = 4_000_000
            let request = TransportRequest(
                url: server.url("/hold?key=\(key)&after=1000000"), method: .post, body: .bytes(streamPattern(count: size)))
            var seen: [TransferProgress] = []
            var released = false
            for try await update in session.executeWithProgress(request) {
                seen.append(update.progress)
                let progress = update.progress
                if !released, !progress.isCompleted, progress.expectedBytesToReceive == nil, progress.bytesSent >= 1_000_000 {
                    #expect(progress.fractionCompleted == Double(progress.bytesSent) / Double(size))
                    released = true
                    _ = try await session.execute(TransportRequest(url: server.url("/release?key=\(key)")))
                }
            }
            #expect(released, "\(seen)")
            #expect(seen.allSatisfy { $0.bytesSent + $0.bytesReceived > 0 })
            #expect(seen.last?.fractionCompleted == 1)
            #expect(seen.last?.bytesSent == size)
        }
    }

    /// A HEAD's expected body is 0 bytes.
    @Test func aHeadRequestExpectsNoBody() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let received = try await collect(session.executeWithProgress(TransportRequest(url: server.url("/file?n=5000"), method: .head)))
            expectWellFormed(received)
            let last = try #require(received.last)
            #expect(last.progress.expectedBytesToReceive == 0)
            #expect(last.progress.bytesReceived == 0)
            #expect(last.response?.headerFields[.contentLength] == "5000")
        }
    }

    /// After a redirect the counts start again: the totals are the final response's.
    @Test func aRedirectStartsTheCountsAgain() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let received = try await collect(
                session.executeWithProgress(TransportRequest(url: server.url("/redirect?status=302&to=/file%3Fn%3D50000"))))
            expectWellFormed(received)
            let last = try #require(received.last)
            #expect(last.progress.bytesReceived == 50_000)
            #expect(last.progress.expectedBytesToReceive == 50_000)
            #expect(last.response?.redirects.map(\.status.code) == [302])
        }
    }

    /// Nothing is sent until the loop starts.
    @Test func theTransferStartsWhenIterationStarts() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let key = UUID().uuidString
            let updates = session.executeWithProgress(TransportRequest(url: server.url("/file?n=1000&key=\(key)")))
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await serverLog(server, session, key: key, as: FileRequestRecord.self).isEmpty)
            let received = try await collect(updates)
            #expect(received.last?.response?.body.count == 1000)
            #expect(try await serverLog(server, session, key: key, as: FileRequestRecord.self).count == 1)
        }
    }

    /// A loop that is slow gets the latest value, not a backlog: held up while the whole body arrives, it
    /// then sees at most one update before the last.
    @Test func aSlowLoopGetsTheLatestValue() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let key = UUID().uuidString
            let updates = session.executeWithProgress(
                TransportRequest(url: server.url("/file?n=1000000&pace=1000000&chunk=5000&key=\(key)")))
            var iterator = updates.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first?.progress.isCompleted == false)
            var sent = false
            for _ in 0..<1000 where !sent {
                sent = try await serverLog(server, session, key: key, as: FileRequestRecord.self).first?.sent == 1_000_000
                if !sent { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(sent)
            try await Task.sleep(for: .milliseconds(300))
            var after: [ProgressUpdate<TransportResponse>] = []
            while let update = try await iterator.next() { after.append(update) }
            // No backlog: the newest counts (one more if the last bytes were still arriving), then the
            // completed update. The last counts are kept apart from it, so they are never skipped (before,
            // the completed update replaced them and this loop saw only it).
            #expect((2...3).contains(after.count), "\(after.map(\.progress))")
            let lastCounts = after.dropLast().last?.progress
            #expect(lastCounts?.isCompleted == false)
            #expect(lastCounts?.bytesReceived == 1_000_000)
            #expect(after.last?.progress.isCompleted == true)
            #expect(after.last?.progress.bytesReceived == 1_000_000)
        }
    }

    /// Leaving the loop aborts the transfer: the server's writes fail on a closed connection before the
    /// body is out, the session counts a cancelled transfer, and the next request works.
    @Test(arguments: Wire.allCases)
    func leavingTheLoopCancelsTheTransfer(wire: Wire) async throws {
        try await withStreamServerAndSession(wire) { server, session in
            let key = UUID().uuidString
            let tag = UUID().uuidString
            let request = TransportRequest(url: server.url("/file?n=5000000&pace=500000&chunk=10000&key=\(key)&tag=\(tag)"))
            var seen = 0
            for try await update in session.executeWithProgress(request) where update.progress.bytesReceived > 0 {
                seen = update.progress.bytesReceived
                break
            }
            #expect(seen > 0)
            #expect(seen < 5_000_000)
            let cancelled = await eventually { session.statistics.cancelledTransfers == 1 && session.statistics.activeTransfers == 0 }
            #expect(cancelled)
            if wire == .http1 {
                let stats = try await server.stats(until: { $0.tags[tag]?.outq == -1 })
                #expect(stats.tags[tag]?.outq == -1)
                #expect(stats.tags[tag]?.done == false)
            }
            let log = try await serverLog(server, session, key: key, as: FileRequestRecord.self)
            #expect(log.first.map { $0.sent < 5_000_000 } == true)
            let next = try await session.execute(TransportRequest(url: server.url("/file?n=1000")))
            #expect(next.body.count == 1000)
        }
    }

    /// Cancelling the task that iterates aborts the transfer, and the loop throws `cancelled`.
    @Test func cancellingTheIteratingTaskCancelsTheTransfer() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            let key = UUID().uuidString
            let request = TransportRequest(url: server.url("/file?n=5000000&pace=500000&chunk=10000&key=\(key)"))
            let progressed = Locked(0)
            let task = Task {
                for try await update in session.executeWithProgress(request) { progressed.withLock { $0 = update.progress.bytesReceived } }
            }
            #expect(await eventually { progressed.withLock { $0 } > 0 })
            task.cancel()
            let error = await transportError { try await task.value }
            #expect(error?.code == .cancelled)
            let cancelled = await eventually { session.statistics.cancelledTransfers == 1 && session.statistics.activeTransfers == 0 }
            #expect(cancelled)
            let log = try await serverLog(server, session, key: key, as: FileRequestRecord.self)
            #expect(log.first.map { $0.sent < 5_000_000 } == true)
        }
    }

    /// A failure is thrown by the loop, after the updates that came before it.
    @Test func aFailureIsThrownByTheLoop() async throws {
        try await withStreamServerAndSession(.http1) { server, session in
            var updates: [TransferProgress] = []
            let error = await transportError {
                for try await update in session.executeWithProgress(TransportRequest(url: server.url("/file?n=500000&cut=200000"))) {
                    updates.append(update.progress)
                }
            }
            #expect(error?.code == .connectionClosed)
            #expect(updates.allSatisfy { !$0.isCompleted && $0.bytesReceived <= 200_000 })
        }
    }

    /// A download's progress ends with its DownloadResponse, counting the file's bytes.
    @Test func aDownloadWithProgressEndsWithItsResponse() async throws {
        try await withScratchDirectory { directory in
            try await withStreamServerAndSession(.http1) { server, session in
                let destination = directory + "/out.bin"
                let request = TransportRequest(url: server.url("/file?n=600000&pace=600000&chunk=5000"))
                let received = try await collect(session.downloadWithProgress(request, to: DownloadDestination(path: destination)))
                expectWellFormed(received)
                expectCoalesced(received, totalKnown: true)
                #expect(received.count >= 3)
                let last = try #require(received.last)
                #expect(last.progress.bytesReceived == 600_000)
                #expect(last.progress.decodedBytesReceived == 600_000)
                #expect(last.progress.expectedBytesToReceive == 600_000)
                let response = try #require(last.response)
                #expect(response.filePath == destination)
                #expect(response.fileSize == 600_000)
                #expect(response.head.status.code == 200)
                #expect(scratchBytes(destination) == streamPattern(count: 600_000))
                #expect(scratchEntries(directory) == ["out.bin"])
            }
        }
    }
}
