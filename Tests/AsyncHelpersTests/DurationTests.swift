import Testing

@testable import AsyncHelpers

@Suite("Duration in seconds")
struct DurationTests {
    @Test(
        arguments: [
            (Duration.milliseconds(1500), 1.5), (.nanoseconds(1), 1e-9), (.zero, 0), (.milliseconds(-250), -0.25),
            (.seconds(7 * 86_400), 604_800), (.microseconds(10), 1e-5),
        ])
    func fractionalSeconds(duration: Duration, seconds: Double) {
        #expect(abs(duration.seconds - seconds) <= abs(seconds) * 1e-15)
    }
}
