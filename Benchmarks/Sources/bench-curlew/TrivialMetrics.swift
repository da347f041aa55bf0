// Curlew benchmarks — the cheapest metrics backend that still records: every handler one atomic add per
// record, for the provider measured with telemetry on (`curlew-metrics`).

import CoreMetrics
import Synchronization

final class TrivialHandler: CounterHandler, FloatingPointCounterHandler, MeterHandler, RecorderHandler, TimerHandler, Sendable {
    let total = Atomic<Int64>(0)

    func increment(by amount: Int64) { total.wrappingAdd(amount, ordering: .relaxed) }
    func increment(by amount: Double) { total.wrappingAdd(Int64(amount), ordering: .relaxed) }
    func decrement(by amount: Double) { total.wrappingSubtract(Int64(amount), ordering: .relaxed) }
    func set(_ value: Int64) { total.store(value, ordering: .relaxed) }
    func set(_ value: Double) { total.store(Int64(value), ordering: .relaxed) }
    func record(_ value: Int64) { total.wrappingAdd(value, ordering: .relaxed) }
    func record(_ value: Double) { total.wrappingAdd(Int64(value), ordering: .relaxed) }
    func recordNanoseconds(_ duration: Int64) { total.wrappingAdd(duration, ordering: .relaxed) }
    func reset() { total.store(0, ordering: .relaxed) }
}

struct TrivialMetrics: MetricsFactory {
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { TrivialHandler() }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        TrivialHandler()
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { TrivialHandler() }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        TrivialHandler()
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { TrivialHandler() }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}
