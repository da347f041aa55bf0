// Curlew — engine tests.
import CurlewEngine
import Testing
import HTTPTypes
import FoundationEssentials

@Test func smoke() async throws {
    let session = try CurlSession()
    let r = try await session.execute(TransportRequest(url: "http://127.0.0.1:18080/a.json"))
    #expect(r.status.code == 200)
    #expect(String(decoding: r.body, as: UTF8.self) == "{\"hello\":\"world\"}\n")
    print(r.headerFields, r.timings, r.httpVersion, r.connectionReused)
    let r2 = try await session.execute(TransportRequest(url: "http://127.0.0.1:18080/a.json"))
    print(r2.connectionReused, session.statistics)
    await session.shutdown()
}
