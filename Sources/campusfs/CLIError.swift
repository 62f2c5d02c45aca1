import ArgumentParser
import Foundation
import StudIPKit
import StudIPModel

/// A failure the CLI reports: one line saying what failed and what to do, and the exit code of docs/architecture.md,
/// "Exit codes" (1 usage, 2 auth, 3 network, 4 other).
enum CLIError: Error, CustomStringConvertible {
    case usage(String)
    case auth(String)
    case network(String)
    case other(String)

    init(_ error: StudIPError) {
        switch error.exitCode {
        case 2: self = .auth(error.description)
        case 3: self = .network(error.description)
        default: self = .other(error.description)
        }
    }

    var description: String {
        switch self {
        case .usage(let message), .auth(let message), .network(let message), .other(let message): message
        }
    }

    var exitCode: Int32 {
        switch self {
        case .usage: 1
        case .auth: 2
        case .network: 3
        case .other: 4
        }
    }
}

extension AsyncParsableCommand {
    /// Runs `body`, printing a ``CLIError`` as `campusfs: <message>` and exiting with its code.
    func reportingErrors(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as CLIError {
            printError("campusfs: \(error)")
            throw ExitCode(error.exitCode)
        } catch let error as StudIPError {
            printError("campusfs: \(error)")
            throw ExitCode(error.exitCode)
        }
    }
}

extension ParsableCommand {
    /// ``AsyncParsableCommand/reportingErrors(_:)`` for commands that never wait for the network.
    func reportingErrorsNow(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as CLIError {
            printError("campusfs: \(error)")
            throw ExitCode(error.exitCode)
        }
    }
}

func printError(_ message: String, terminator: String = "\n") {
    FileHandle.standardError.write(Data((message + terminator).utf8))
}

/// Prints a line and flushes it at once, also into a pipe or file: `demo` and `mount --foreground` say that the
/// mount is ready and then serve for hours, and whoever reads their output needs that line now.
func printNow(_ message: String) {
    print(message)
    fflush(nil)
}
