import AsyncHelpers
import Dispatch
import Foundation
import Synchronization
import SystemSupport

/// The desktop's way to open something — a web page in the browser, a folder in the file manager — through
/// `xdg-open` (freedesktop): the one way CampusFS starts another program for the person. `xdg-open` honours
/// `BROWSER` outside a desktop session, which is how tests see what it was asked to open.
public enum Opener {
    /// How long `xdg-open` may take to say that it failed; one still running then is taken as a program that
    /// opened and stays (a first Firefox window keeps `xdg-open` waiting for as long as it is open).
    static let patience: Duration = .seconds(3)

    /// Opens `target` (a URL or a path); false when there is no `xdg-open` or it reported failure (no browser, no
    /// desktop). Blocks for up to ``patience``: call it from a thread that may block, never from a task.
    public static func open(_ target: String) -> Bool {
        let succeeded = Mutex<Bool>(false)
        let ended = DispatchSemaphore(value: 0)
        // The child is waited for to its end on a thread of its own, also when that is after the patience. Its
        // output goes to /dev/null, not to our pipes: the program it starts (a browser, a file manager) inherits
        // them and may live for hours.
        Thread {
            let output = try? Subprocess.run(
                URL(fileURLWithPath: "/bin/sh"), ["-c", #"exec xdg-open "$1" >/dev/null 2>&1"#, "xdg-open", target])
            succeeded.withLock { $0 = output.map { $0.status == 0 && !$0.signaled } ?? false }
            ended.signal()
        }.start()
        guard ended.wait(timeout: .now() + patience.seconds) == .success else { return true }
        return succeeded.withLock { $0 }
    }
}
