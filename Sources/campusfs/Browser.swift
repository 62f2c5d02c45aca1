import Foundation

/// The desktop's web browser, through `xdg-open` (freedesktop): the one way CampusFS starts another program for
/// the person. Used for the OAuth2 login; a test points `BROWSER` at a script of its own, which `xdg-open`
/// honours outside a desktop session.
enum Browser {
    /// How long `xdg-open` may take to say that it failed; one still running then is taken as a browser that
    /// opened and stays (a first Firefox window keeps `xdg-open` waiting for as long as it is open).
    static let patience: Duration = .seconds(3)

    /// Opens `url`; false when there is no `xdg-open` or it reported failure (no browser, no desktop). Blocks for up
    /// to ``patience``: call from ``BlockingPool``.
    static func open(_ url: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", url]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return false
        }
        let deadline = ContinuousClock.now + patience
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        return process.isRunning || process.terminationStatus == 0
    }
}
