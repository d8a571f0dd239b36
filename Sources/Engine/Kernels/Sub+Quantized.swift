extension Sub {
    /// Quantized SUB (uint8, int8): ADD's rescaling with the right operand negated. TFLite
    /// also accepts an output multiplier above 1 (absurdly narrow output ranges), which its
    /// kernel then applies with a negative shift the C++ leaves undefined; that is rejected here.
    static func prepareQuantized(_ context: inout PrepareContext, broadcast: Broadcast, activation: FusedActivation) throws(ModelError) -> any Kernel {
        try AdditiveQuantized.prepare(&context, broadcast: broadcast, activation: activation, subtract: true)
    }
}
