import Foundation

/// A close-on-exec pipe whose read end is drained by a dedicated thread: a child's stdout or
/// stderr for ``ChildProcess``.
struct OutputPipe: Sendable {
    let readDescriptor: Int32
    let writer: FileHandle

    init() throws {
        var descriptors: [Int32] = [-1, -1]
        guard let pipe2 = Self.pipe2, pipe2(&descriptors, O_CLOEXEC) == 0 else {
            throw TestSupportError("pipe2: \(String(cString: strerror(errno)))")
        }
        readDescriptor = descriptors[0]
        writer = FileHandle(fileDescriptor: descriptors[1], closeOnDealloc: false)
    }

    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    /// glibc's `pipe2`, which Swift's Glibc module does not declare (it is a `_GNU_SOURCE` call).
    private static var pipe2: Pipe2? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2").map { unsafeBitCast($0, to: Pipe2.self) }
    }

    /// Closes the parent's write end and reads until end of file on a new thread, handing each
    /// chunk to `deliver`, then `nil` at end of file.
    func startReading(_ deliver: @escaping @Sendable ([UInt8]?) -> Void) {
        try? writer.close()  // the descriptor is released even when close reports an error
        let descriptor = readDescriptor
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    deliver(Array(buffer[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(descriptor)
            deliver(nil)
        }
    }

    /// For a child that never started.
    func closeBothEnds() {
        try? writer.close()  // as above
        close(readDescriptor)
    }
}
