/// The operators this engine implements. One line per operator; each kernel lives in its own file.
func registerStandardKernels(_ r: inout OpRegistry) {
    r.register(.conv2D, Conv2D.prepare)
    r.register(.depthwiseConv2D, DepthwiseConv2D.prepare)
}
