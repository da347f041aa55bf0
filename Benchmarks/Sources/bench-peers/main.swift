// Curlew benchmarks — the peers: async-http-client (`ahc`) and URLSession on Linux (`urlsession`),
// each configured as its documentation recommends for throughput.

import AsyncHTTPClient
import BenchCore
import Foundation
import FoundationNetworking
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL

benchMain(clients: [
    "ahc": { workload, base in
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: workload.connections ?? workload.concurrency)
        configuration.decompression = .enabled(limit: .none)
        if workload.tls {
            // The same CA file as every client; NIOSSL's client keeps no TLS session cache to resume from.
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(BenchPayloads.caFile)
            configuration.tlsConfiguration = tls
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let closes = workload.newConnections
        let decode = workload.decode
        let body = workload.body
        let url = base + workload.path
        let method: HTTPMethod = workload.method == "POST" ? .POST : .GET
        return BenchClient {
            var request = HTTPClientRequest(url: url)
            request.method = method
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: body))
            }
            if closes { request.headers.add(name: "Connection", value: "close") }
            let response = try await client.execute(request, timeout: .seconds(120))
            guard response.status == .ok else { throw BenchFailure("status \(response.status.code)") }
            let buffer = try await response.body.collect(upTo: 512 * 1024 * 1024)
            if decode {
                let users = try JSONDecoder().decode([BenchUser].self, from: buffer)
                guard users.count == 121 else { throw BenchFailure("wrong users") }
            }
            return buffer.readableBytes
        }
    },
    "urlsession": { workload, base in
        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = workload.connections ?? workload.concurrency
        configuration.timeoutIntervalForRequest = 120
        let session = URLSession(configuration: configuration)
        guard let url = URL(string: base + workload.path) else { throw BenchFailure("bad URL") }
        let decode = workload.decode
        let body = workload.body
        let method = workload.method
        return BenchClient {
            var request = URLRequest(url: url)
            request.httpMethod = method
            if let body {
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data(body)
            }
            let (data, response) = try await session.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200 else { throw BenchFailure("status \(status)") }
            if decode {
                let users = try JSONDecoder().decode([BenchUser].self, from: data)
                guard users.count == 121 else { throw BenchFailure("wrong users") }
            }
            return data.count
        }
    },
])
