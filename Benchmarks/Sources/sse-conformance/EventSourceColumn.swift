// mattt/EventSource 1.1.1: its `EventSource.Parser` actor is public, but the package does not compile on
// Linux, so it cannot be a dependency here. Building the package alone on Linux (Swift 6.3.1) fails with:
//
//   Sources/EventSource/EventSource.swift:398:64: error: value of type 'URLSession' has no member 'bytes'
//       let (byteStream, response) = try await session.bytes(for: currentRequest, delegate: nil)
//   Sources/EventSource/EventSource.swift:399:52: error: 'nil' requires a contextual type
//
// (FoundationNetworking's URLSession has no `bytes(for:delegate:)`; the file has no `#if` around it.)

let eventSourceColumn = Column(
    key: "eventsource",
    title: "mattt/EventSource 1.1.1",
    unavailable: "does not build on Linux: no URLSession.bytes(for:delegate:)",
    notes: [
        "`swift build` of the package alone (Swift 6.3.1, Linux): `Sources/EventSource/EventSource.swift:398:64: error: "
            + "value of type 'URLSession' has no member 'bytes'` and `399:52: error: 'nil' requires a contextual type`. "
            + "Its parser (`EventSource.Parser`, a public actor) is in the same module, so it cannot be used either.",
    ]
)
