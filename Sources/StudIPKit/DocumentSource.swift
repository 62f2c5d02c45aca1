/// A Stud.IP installation as CampusFS reads it. Two implementations: JSON:API and legacy REST.
///
/// A refresh is `overview()` once, then `content(of:)` per course (in parallel, bounded by the client).
/// Implementations are safe to call from many tasks at once.
public protocol DocumentSource: Sendable {
    /// Which API this source speaks, for status lines ("JSON:API" / "legacy REST").
    var apiName: String { get }

    /// The user, all semesters, and the user's courses with their semesters.
    func overview() async throws(StudIPError) -> RemoteOverview

    /// All readable folders and documents of one course. One broken folder does not fail the course: it is
    /// reported in ``CourseContent/failedFolderIDs``.
    func content(of course: RemoteCourse) async throws(StudIPError) -> CourseContent
}
