// The request context: Hummingbird's own values plus the connection the request came in on.

import Hummingbird
import NIOCore

/// The request context of this service: Hummingbird's core values and the request's connection.
///
/// Hummingbird hands every new context the channel of its connection
/// (`ApplicationRequestContextSource.channel`); keeping it lets a route learn that its client has gone
/// away (see ``withCancellationOnClose(of:_:)``).
struct GatewayRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection the request arrived on.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }
}
