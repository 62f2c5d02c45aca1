/// The document API: Stud.IP JSON:API and legacy REST clients behind one protocol (issue 3).
