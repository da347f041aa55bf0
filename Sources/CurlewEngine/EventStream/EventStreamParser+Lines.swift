// Curlew — the event-stream parser's lines: splitting bytes at CR, LF and CRLF within the limits,
// interpreting each field, and dispatching the event at a blank line.

extension EventStreamParser {

    /// Parses `bytes`, returning the error to throw, if any (closures of the standard library's buffer
    /// accessors cannot throw a typed error).
    mutating func consume(_ bytes: UnsafeBufferPointer<UInt8>, into events: inout [ServerSentEvents.Event]) -> EventStreamError? {
        if let failure { return failure }
        let error = scan(bytes, into: &events)
        if let error { failure = error }
        return error
    }

    /// Splits `bytes` into lines: each line lying whole inside them is interpreted in place, the start of
    /// a line whose end is still to come is kept in ``lineBuffer``.
    mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>, into events: inout [ServerSentEvents.Event]) -> EventStreamError? {
        guard var position = bytes.baseAddress, !bytes.isEmpty else { return nil }
        let end = position + bytes.count
        if checksByteOrderMark {
            while byteOrderMarkBytesSeen < 3, position < end, position.pointee == Self.byteOrderMark(byteOrderMarkBytesSeen) {
                byteOrderMarkBytesSeen += 1
                position += 1
            }
            if byteOrderMarkBytesSeen == 3 {
                checksByteOrderMark = false
            } else if position == end {
                return nil  // every byte so far is the start of a byte order mark: wait for the rest
            } else {
                // Not a byte order mark: the bytes that looked like its start begin the first line.
                checksByteOrderMark = false
                for index in 0..<byteOrderMarkBytesSeen { lineBuffer.append(Self.byteOrderMark(index)) }
                if lineBuffer.count > maxLineLength { return .lineTooLong(limit: maxLineLength) }
            }
            if position == end { return nil }
        }
        if skipsLineFeed {
            skipsLineFeed = false
            if position.pointee == Self.lineFeed {
                position += 1
                if position == end { return nil }
            }
        }
        // The value of the block's only `data` line so far, left in `bytes` rather than copied into
        // `dataBuffer`: when the empty line follows within `bytes` (the usual event of one data line), the
        // event's data is decoded straight from the chunk. Copied into `dataBuffer` before `bytes` is gone.
        var pendingData: UnsafeBufferPointer<UInt8>?
        defer { if let pendingData { appendData(pendingData) } }
        // The next LF and CR at or after `position` (`end` when there is none): each is searched for
        // again only once `position` has passed it, so every byte is searched at most once for each.
        var nextLineFeed = Self.find(Self.lineFeed, from: position, to: end)
        var nextCarriageReturn = Self.find(Self.carriageReturn, from: position, to: end)
        while true {
            let terminator: UnsafePointer<UInt8>
            if position.pointee == Self.lineFeed || position.pointee == Self.carriageReturn {
                terminator = position  // an empty line
            } else {
                if nextLineFeed < position { nextLineFeed = Self.find(Self.lineFeed, from: position, to: end) }
                if nextCarriageReturn < position {
                    nextCarriageReturn = Self.find(Self.carriageReturn, from: position, to: end)
                }
                terminator = min(nextLineFeed, nextCarriageReturn)
            }
            let length = terminator - position
            if terminator == end {
                // The line goes on in the next chunk.
                if lineBuffer.count + length > maxLineLength, let error = overLimit(lineBuffer.count + length, position, length, held: pendingData.map { $0.count + 1 } ?? 0) {
                    return error
                }
                lineBuffer.append(contentsOf: UnsafeBufferPointer(start: position, count: length))
                return nil
            }
            if lineBuffer.isEmpty {
                if length > maxLineLength, let error = overLimit(length, position, length, held: pendingData.map { $0.count + 1 } ?? 0) { return error }
                let line = UnsafeBufferPointer(start: position, count: length)
                if let error = interpret(line, pendingData: &pendingData, into: &events) { return error }
            } else {
                if lineBuffer.count + length > maxLineLength, let error = overLimit(lineBuffer.count + length, position, length, held: pendingData.map { $0.count + 1 } ?? 0) {
                    return error
                }
                // Take the buffer out of `self` while its bytes are interpreted (which mutates `self`).
                var line: [UInt8] = []
                swap(&line, &lineBuffer)
                line.append(contentsOf: UnsafeBufferPointer(start: position, count: length))
                // The line's bytes do not outlive the closure: its data value is copied, never left pending.
                if let pending = pendingData {
                    appendData(pending)
                    pendingData = nil
                }
                let error = line.withUnsafeBufferPointer { line in
                    var linePendingData: UnsafeBufferPointer<UInt8>?
                    let error = interpret(line, pendingData: &linePendingData, into: &events)
                    if let linePendingData { appendData(linePendingData) }
                    return error
                }
                releaseOrClear(&line)
                swap(&line, &lineBuffer)
                if let error { return error }
            }
            position = terminator + 1
            if terminator.pointee == Self.carriageReturn {
                if position == end {
                    skipsLineFeed = true
                    return nil
                }
                if position.pointee == Self.lineFeed { position += 1 }
            }
            if position == end { return nil }
        }
    }

    /// The error for a line of `total` bytes so far, longer than ``maxLineLength``, whose bytes are
    /// ``lineBuffer`` then the `count` at `rest`: none for a `data` line, whose value goes to the event's
    /// data (`held` bytes of it not yet in ``dataBuffer``) and is bounded by ``maxEventSize`` instead (its 6-byte `data: ` prefix aside; the data
    /// buffer's exact bound is checked as the value is appended).
    func overLimit(_ total: Int, _ rest: UnsafePointer<UInt8>, _ count: Int, held: Int) -> EventStreamError? {
        var isData = true
        for (index, expected) in Self.dataFieldPrefix.enumerated() {
            let byte: UInt8? =
                index < lineBuffer.count
                ? lineBuffer[index] : (index - lineBuffer.count < count ? rest[index - lineBuffer.count] : nil)
            if byte != expected {
                isData = false
                break
            }
        }
        guard isData else { return .lineTooLong(limit: maxLineLength) }
        let allowed = maxEventSize - dataBuffer.count - held + Self.dataPrefixLength
        return total > allowed ? .eventTooLarge(limit: maxEventSize) : nil
    }

    /// `data:`, how a `data` line starts.
    static let dataFieldPrefix: [UInt8] = [0x64, 0x61, 0x74, 0x61, colon]
    /// `data: `: what a `data` line holds besides its value.
    static let dataPrefixLength = 6

    /// Interprets one line (without its terminator). `pendingData` is the value of the block's only
    /// `data` line so far when it has not been copied into ``dataBuffer``; a first `data` value is left
    /// there (a later one copies both).
    mutating func interpret(
        _ line: UnsafeBufferPointer<UInt8>, pendingData: inout UnsafeBufferPointer<UInt8>?, into events: inout [ServerSentEvents.Event]
    ) -> EventStreamError? {
        guard let start = line.baseAddress, !line.isEmpty else {
            dispatch(pendingData: pendingData, into: &events)
            pendingData = nil
            return nil
        }
        if start.pointee == Self.colon {  // a comment
            if comments != nil {
                let text = String(decoding: UnsafeBufferPointer(start: start + 1, count: line.count - 1), as: UTF8.self)
                comments?.append((before: events.count, text: text))
            }
            return nil
        }
        let count = line.count
        let nameLength: Int
        var value: UnsafePointer<UInt8>
        var valueLength: Int
        if let colon = Self.findColon(start, count: count) {
            nameLength = colon - start
            value = colon + 1
            valueLength = count - nameLength - 1
            if valueLength > 0, value.pointee == Self.space {
                value += 1
                valueLength -= 1
            }
        } else {
            nameLength = count
            value = start + count
            valueLength = 0
        }
        switch nameLength {
        case 4 where start[0] == 0x64 && start[1] == 0x61 && start[2] == 0x74 && start[3] == 0x61:  // data
            // The event's data once this value is added, without the LF that follows it.
            let pendingCount = pendingData.map { $0.count + 1 } ?? 0
            if dataBuffer.count + pendingCount + valueLength > maxEventSize { return .eventTooLarge(limit: maxEventSize) }
            let data = UnsafeBufferPointer(start: value, count: valueLength)
            if dataBuffer.isEmpty, pendingData == nil {
                pendingData = data
            } else {
                if let pending = pendingData {
                    appendData(pending)
                    pendingData = nil
                }
                appendData(data)
            }
        case 5 where start[0] == 0x65 && start[1] == 0x76 && start[2] == 0x65 && start[3] == 0x6E && start[4] == 0x74:  // event
            eventTypeBuffer = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
        case 2 where start[0] == 0x69 && start[1] == 0x64:  // id
            if Self.findOptional(0, from: value, to: value + valueLength) == nil {
                newEventID = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
            }
        case 5 where start[0] == 0x72 && start[1] == 0x65 && start[2] == 0x74 && start[3] == 0x72 && start[4] == 0x79:  // retry
            if let milliseconds = Self.reconnectionMilliseconds(UnsafeBufferPointer(start: value, count: valueLength)) {
                let time = Duration.milliseconds(milliseconds)
                reconnectionTime = time
                blockRetry = time
            }
        default:
            break  // an unknown field
        }
        return nil
    }

    /// The specification's "dispatch the event", at an empty line; `pendingData` is the block's only
    /// `data` value when it was not copied into ``dataBuffer``.
    mutating func dispatch(pendingData: UnsafeBufferPointer<UInt8>?, into events: inout [ServerSentEvents.Event]) {
        if let newEventID {
            committedEventID = newEventID
            self.newEventID = nil
        }
        let retry = blockRetry
        blockRetry = nil
        // The bytes are copied, not decoded: `ServerSentEvents.Event.data` decodes them when it is read, and typed
        // streams decode JSON from the bytes.
        let data: [UInt8]
        if let pendingData {
            data = Array(pendingData)
        } else if dataBuffer.isEmpty {
            if !eventTypeBuffer.isEmpty { eventTypeBuffer = "" }
            return
        } else {
            // The data buffer ends with the LF its last `data` line added: decode everything before it.
            data = dataBuffer.withUnsafeBufferPointer { bytes in Array(bytes.dropLast()) }
            releaseOrClear(&dataBuffer)
        }
        if eventTypeBuffer.isEmpty {
            events.append(ServerSentEvents.Event(type: "message", dataBytes: data, id: committedEventID, retry: retry))
        } else {
            events.append(ServerSentEvents.Event(type: eventTypeBuffer, dataBytes: data, id: committedEventID, retry: retry))
            eventTypeBuffer = ""
        }
    }

    /// Appends a `data` value and its LF to the data buffer.
    mutating func appendData(_ value: UnsafeBufferPointer<UInt8>) {
        dataBuffer.append(contentsOf: value)
        dataBuffer.append(Self.lineFeed)
    }


    /// Empties `buffer`, keeping its capacity unless it grew large.
    func releaseOrClear(_ buffer: inout [UInt8]) {
        if buffer.capacity > Self.retainedBufferCapacity {
            buffer = []
        } else {
            buffer.removeAll(keepingCapacity: true)
        }
    }
}
