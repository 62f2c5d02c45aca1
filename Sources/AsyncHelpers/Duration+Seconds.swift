extension Duration {
    /// The value as fractional seconds: libfuse's timeouts, `TimeInterval`s, Dispatch's deadlines. (NIO converts
    /// with `TimeAmount(_:)`; scaling works on `Duration` itself, `duration * 0.1`.)
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
