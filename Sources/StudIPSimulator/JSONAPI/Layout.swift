/// Everything that differs between the JSON:API releases the simulator plays, in one place (API.md §3).
///
/// 5.0 uses neomerx/json-api v1 (the `fixtures-5.0.7` layout); 5.1–5.5 use neomerx v4 (§3.8); 6.x is the 5.5
/// layout without OAuth1 and with the 6.x download and course differences.
struct Layout: Sendable {
    let flavour: Flavour

    /// neomerx v1 writes a relationship's `data` (and `meta`) before its `links`; v4 writes `links` first.
    var linksFirst: Bool { flavour != .v50 }
    /// `meta.count` on the `file-refs`/`folders` relationships of folders (5.1+).
    var folderRelationshipCounts: Bool { flavour != .v50 }
    /// `meta.name` on a folder's `owner` relationship (5.1+; 5.0 shows it only on file-refs).
    var folderOwnerName: Bool { flavour != .v50 }
    /// The `is-empty` folder attribute (5.5+).
    var folderIsEmpty: Bool { flavour != .v50 }
    /// Semester `description` (≤ 5.3) versus `is-current` (5.5+).
    var semesterDescription: Bool { flavour == .v50 }
    var semesterIsCurrent: Bool { flavour != .v50 }
    /// `users/me` lists the identifiers of the user's memberships (5.2–6.1).
    var membershipDataInUser: Bool { flavour != .v50 }
    /// The Blubber relationship on users (enabled in the captured 5.0 installation).
    var userBlubberThreads: Bool { flavour == .v50 }
    /// `courseware-bookmarks` on users, `courseware` and `tools` on courses, `meta.avatar` on courses (5.1+).
    var coursewareAndTools: Bool { flavour != .v50 }
    /// `meta.download-url`: the content route (5.0) or `sendfile.php` (5.1+).
    var downloadURLIsContentRoute: Bool { flavour == .v50 }
    /// Error objects: v1 writes `{"id": title, "status"}` as `application/vnd.api+json`; 5.1+ writes
    /// `{"status", "title", "detail"}` as `application/json` (API.md §3.9).
    var errorsUseIDAsTitle: Bool { flavour == .v50 }
    var errorContentType: String { flavour == .v50 ? "application/vnd.api+json" : "application/json" }
    /// 5.1+ rejects requests without `Accept`; 5.0 (neomerx v1) treats a missing header as `*/*` — the captured
    /// 5.0.7 server answered the `Accept`-less DELETE requests with 204.
    var missingAcceptIsAcceptable: Bool { flavour == .v50 }
    /// 6.x sends an ASCII `filename=` next to `filename*=` in the content route's `Content-Disposition`.
    var contentDispositionWithFallback: Bool { flavour == .v6 }
    /// 5.x sorts `users/{id}/courses` by start time and name; 6.x keeps database order.
    var sortsUserCourses: Bool { flavour != .v6 }
    /// An unknown route is Slim 4's JSON error (5.1+); 5.0.7 (Slim 3) sends an HTML page that echoes credentials.
    var unknownRouteIsJSON: Bool { flavour != .v50 }
    /// `course-events` with `display-value`, `type` and `is-cancelled` (API.md §3.6, from the 6.x source; 5.0.7 has
    /// none of them, so a cancelled date is marked only in title, categories and description).
    var courseEventFlags: Bool { flavour != .v50 }
    /// 6.x takes an open-ended course's start semester from the current semester, 5.x from its `start_time`.
    var openEndedStartIsCurrentSemester: Bool { flavour == .v6 }
}
