import ArgumentParser

/// `campusfs`: mount a Stud.IP installation as a folder, and the commands around it.
@main
struct CampusFSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "campusfs",
        abstract: "Your university's Stud.IP as a folder.")
}
