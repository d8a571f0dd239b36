/// The operators this engine implements. One line per operator; each kernel lives in its own file.
func registerStandardKernels(_ r: inout OpRegistry) {
    r.register(.conv2D, Conv2D.prepare)
    r.register(.depthwiseConv2D, DepthwiseConv2D.prepare)
    r.register(.averagePool2D, AveragePool2D.prepare)
    r.register(.maxPool2D, MaxPool2D.prepare)
    r.register(.mean, Mean.prepare)
    r.register(.fullyConnected, FullyConnected.prepare)
    r.register(.softmax, Softmax.prepare)
    r.register(.logistic, Logistic.prepare)
    r.register(.tanh, Tanh.prepare)
    r.register(.relu, Relu.prepare)
    r.register(.relu6, Relu.prepare)
    r.register(.reluN1To1, Relu.prepare)
    r.register(.leakyRelu, LeakyRelu.prepare)
    r.register(.hardSwish, HardSwish.prepare)
}
