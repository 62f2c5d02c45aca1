/// Realistic names for generated installations: lecturers, courses and the topics of their lectures.
enum GeneratedNames {
    struct Person {
        var prefix: String
        var given: String
        var family: String
    }

    struct CourseTemplate {
        var number: String
        var title: String
        var english: Bool
        var topics: [String]
    }

    static let lecturers: [Person] = [
        Person(prefix: "Prof. Dr.", given: "Anna", family: "Schneider"),
        Person(prefix: "Prof. Dr.", given: "Thomas", family: "Müller"),
        Person(prefix: "Dr.", given: "Claudia", family: "Becker"),
        Person(prefix: "Prof. Dr.", given: "Jürgen", family: "Wagner"),
        Person(prefix: "Prof. Dr.", given: "Elena", family: "Petrova"),
        Person(prefix: "Dr.", given: "David", family: "Brown"),
        Person(prefix: "Prof. Dr.", given: "Aylin", family: "Yılmaz"),
        Person(prefix: "Dr.", given: "Lukas", family: "Richter"),
        Person(prefix: "Prof. Dr.", given: "María", family: "García López"),
        Person(prefix: "Prof. Dr.-Ing.", given: "Stefan", family: "Hoffmann"),
        Person(prefix: "", given: "Sophie", family: "Klein"),
        Person(prefix: "Dr.", given: "Henrik", family: "Østergaard"),
    ]

    static let informatikDE = [
        "Einführung", "Zahlendarstellung", "Algorithmen und Komplexität", "Sortierverfahren", "Suchbäume",
        "Hashing", "Graphen", "Kürzeste Wege", "Dynamische Programmierung", "Rekursion", "Objektorientierung",
        "Nebenläufigkeit", "Datenbanken", "Rechnernetze", "Zusammenfassung",
    ]
    static let informaticsEN = [
        "Introduction", "Models of Computation", "Processes and Threads", "Scheduling", "Synchronisation",
        "Memory Management", "File Systems", "Networking", "Consistency Models", "Consensus", "Replication",
        "Security", "Performance", "Case Studies", "Summary",
    ]
    static let mathematikDE = [
        "Mengen und Abbildungen", "Vollständige Induktion", "Reelle Zahlen", "Folgen", "Reihen", "Stetigkeit",
        "Differentiation", "Mittelwertsatz", "Integration", "Taylorreihen", "Vektorräume", "Lineare Abbildungen",
        "Determinanten", "Eigenwerte", "Normalformen",
    ]
    static let mathematicsEN = [
        "Sets and Maps", "Vector Spaces", "Bases and Dimension", "Linear Maps", "Matrices", "Determinants",
        "Eigenvalues", "Diagonalisation", "Inner Products", "Probability Spaces", "Random Variables",
        "Expectation", "Law of Large Numbers", "Central Limit Theorem", "Markov Chains",
    ]
    static let physikDE = [
        "Kinematik", "Newtonsche Axiome", "Arbeit und Energie", "Impuls", "Drehbewegung", "Schwingungen", "Wellen",
        "Hydrostatik", "Wärmelehre", "Elektrostatik", "Magnetismus", "Induktion", "Optik", "Relativität",
        "Atomphysik",
    ]
    static let economicsEN = [
        "Introduction", "Supply and Demand", "Elasticity", "Consumer Choice", "Production", "Costs",
        "Perfect Competition", "Monopoly", "Oligopoly", "Game Theory", "Labour Markets", "Public Goods",
        "Externalities", "Trade", "Review",
    ]
    static let geisteswissenschaftDE = [
        "Einführung", "Quellenkritik", "Forschungsstand", "Methoden", "Fallstudie I", "Fallstudie II",
        "Theorien", "Diskursanalyse", "Archivarbeit", "Interviews", "Auswertung", "Schreibwerkstatt",
        "Präsentationen", "Diskussion", "Abschluss",
    ]

    static let courses: [CourseTemplate] = [
        CourseTemplate(number: "INF-101", title: "Einführung in die Informatik", english: false, topics: informatikDE),
        CourseTemplate(
            number: "INF-120", title: "Algorithmen und Datenstrukturen", english: false, topics: informatikDE),
        CourseTemplate(number: "INF-130", title: "Programmierung in Java", english: false, topics: informatikDE),
        CourseTemplate(number: "INF-210", title: "Datenbanksysteme", english: false, topics: informatikDE),
        CourseTemplate(number: "INF-220", title: "Betriebssysteme", english: false, topics: informatikDE),
        CourseTemplate(number: "INF-230", title: "Rechnernetze", english: false, topics: informatikDE),
        CourseTemplate(number: "INF-240", title: "Theoretische Informatik", english: false, topics: informatikDE),
        CourseTemplate(number: "INF-250", title: "Softwaretechnik", english: false, topics: informatikDE),
        CourseTemplate(number: "INF-310", title: "Compilerbau", english: false, topics: informatikDE),
        CourseTemplate(number: "INF-320", title: "IT-Sicherheit", english: false, topics: informatikDE),
        CourseTemplate(number: "INF-330", title: "Maschinelles Lernen", english: false, topics: informatikDE),
        CourseTemplate(number: "INF-340", title: "Mensch-Computer-Interaktion", english: false, topics: informatikDE),
        CourseTemplate(number: "CS-401", title: "Distributed Systems", english: true, topics: informaticsEN),
        CourseTemplate(number: "CS-402", title: "Advanced Operating Systems", english: true, topics: informaticsEN),
        CourseTemplate(number: "CS-410", title: "Cloud Computing", english: true, topics: informaticsEN),
        CourseTemplate(number: "CS-420", title: "Computer Vision", english: true, topics: informaticsEN),
        CourseTemplate(number: "CS-430", title: "Natural Language Processing", english: true, topics: informaticsEN),
        CourseTemplate(number: "CS-440", title: "Formal Verification", english: true, topics: informaticsEN),
        CourseTemplate(number: "CS-450", title: "Information Retrieval", english: true, topics: informaticsEN),
        CourseTemplate(number: "MAT-101", title: "Analysis I", english: false, topics: mathematikDE),
        CourseTemplate(number: "MAT-102", title: "Analysis II", english: false, topics: mathematikDE),
        CourseTemplate(number: "MAT-105", title: "Lineare Algebra I", english: false, topics: mathematikDE),
        CourseTemplate(number: "MAT-106", title: "Lineare Algebra II", english: false, topics: mathematikDE),
        CourseTemplate(number: "MAT-201", title: "Numerik", english: false, topics: mathematikDE),
        CourseTemplate(number: "MAT-210", title: "Diskrete Mathematik", english: false, topics: mathematikDE),
        CourseTemplate(number: "MATH-110", title: "Linear Algebra I", english: true, topics: mathematicsEN),
        CourseTemplate(number: "MATH-220", title: "Probability Theory", english: true, topics: mathematicsEN),
        CourseTemplate(number: "MATH-230", title: "Statistics for Data Science", english: true, topics: mathematicsEN),
        CourseTemplate(number: "MATH-310", title: "Stochastic Processes", english: true, topics: mathematicsEN),
        CourseTemplate(number: "PHY-101", title: "Experimentalphysik I", english: false, topics: physikDE),
        CourseTemplate(number: "PHY-102", title: "Experimentalphysik II", english: false, topics: physikDE),
        CourseTemplate(number: "PHY-110", title: "Physikalisches Praktikum", english: false, topics: physikDE),
        CourseTemplate(number: "PHY-201", title: "Theoretische Mechanik", english: false, topics: physikDE),
        CourseTemplate(number: "ECON-101", title: "Principles of Microeconomics", english: true, topics: economicsEN),
        CourseTemplate(number: "ECON-102", title: "Principles of Macroeconomics", english: true, topics: economicsEN),
        CourseTemplate(number: "ECON-210", title: "Behavioural Economics", english: true, topics: economicsEN),
        CourseTemplate(number: "BWL-110", title: "Kosten- und Leistungsrechnung", english: false, topics: economicsEN),
        CourseTemplate(number: "BWL-120", title: "Grundlagen des Marketings", english: false, topics: economicsEN),
        CourseTemplate(
            number: "GES-201", title: "Geschichte der Weimarer Republik", english: false,
            topics: geisteswissenschaftDE),
        CourseTemplate(
            number: "SOZ-110", title: "Methoden der empirischen Sozialforschung", english: false,
            topics: geisteswissenschaftDE),
        CourseTemplate(
            number: "PHIL-130", title: "Einführung in die Ethik", english: false, topics: geisteswissenschaftDE),
        CourseTemplate(
            number: "GER-150", title: "Sprachwandel im Deutschen", english: false, topics: geisteswissenschaftDE),
        CourseTemplate(number: "ENG-110", title: "Academic Writing in English", english: true, topics: economicsEN),
        CourseTemplate(number: "ENG-210", title: "British Literature since 1900", english: true, topics: economicsEN),
        CourseTemplate(
            number: "", title: "Ringvorlesung Nachhaltigkeit", english: false, topics: geisteswissenschaftDE),
        CourseTemplate(
            number: "SEM-501", title: "Seminar: Aktuelle Themen der KI", english: false, topics: informatikDE),
    ]

    static let studyGroups = [
        "Lerngruppe Theoretische Informatik", "Study Group Machine Learning", "Lerngruppe Analysis",
        "Fachschaft Informatik", "Hochschulsport Klettern",
    ]

    static let literatureAuthors = [
        "Cormen et al.", "Knuth", "Tanenbaum", "Forster", "Fischer", "Bosch", "Kurose, Ross", "Sedgewick",
        "Silberschatz", "Demtröder", "Mankiw", "Strang", "Kleinberg, Tardos", "Goodfellow et al.",
    ]

    static let tutorialSlots = [
        "Mo 10–12", "Mo 14–16", "Di 8–10", "Di 12–14", "Mi 10–12", "Mi 16–18", "Do 8–10", "Do 14–16", "Fr 10–12",
    ]
}
