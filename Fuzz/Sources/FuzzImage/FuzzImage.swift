import Engine
import Foundation
import Tasks

/// Image bytes → PNG/JPEG/BMP decoding → every orientation made upright: an `ImageError` or an
/// image whose pixel count matches its size. A 4 M-pixel limit keeps each input cheap.
nonisolated(unsafe) private var limits: Limits = {
    var l = Limits()
    l.maxImagePixels = 4 << 20
    return l
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImage(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let image = try? Image(data: Data(bytes: data, count: size), limits: limits) else { return 0 }
    precondition(image.pixels.count == image.width * image.height * 3)
    for orientation in [Image.Orientation.up, .down, .left, .right] {
        guard let turned = try? Image(pixels: image.pixels, width: image.width, height: image.height, orientation: orientation),
              let upright = try? turned.upright() else { preconditionFailure("a decoded image must turn upright") }
        precondition(upright.pixels.count == image.pixels.count)
    }
    return 0
}
