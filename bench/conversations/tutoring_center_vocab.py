"""Vocabulary for the tutoring-centre conversational memory set.

Names from many cultures, subjects, exam boards, schools, towns, hobbies and the phrasing templates the
generator in ``tutoring_center.py`` fills in. Every fact type has several memory templates so that the same
kind of fact is written down in different ways, the way notes taken after many short chats would be.
"""

from __future__ import annotations

# First names are chosen so that none is also an everyday English word.
FEMALE_NAMES = [
    "Meera",
    "Aisha",
    "Chloe",
    "Zofia",
    "Yuki",
    "Amara",
    "Ingrid",
    "Priya",
    "Fatima",
    "Leila",
    "Mei",
    "Siobhan",
    "Olga",
    "Nkechi",
    "Lucia",
    "Sana",
    "Freya",
    "Ayesha",
    "Thandiwe",
    "Keira",
    "Ottilie",
    "Esi",
    "Rania",
    "Hana",
    "Niamh",
    "Imogen",
    "Valentina",
    "Farah",
    "Nadia",
    "Elif",
    "Dagny",
    "Ximena",
    "Marisol",
    "Anjali",
    "Zainab",
    "Tove",
    "Kalani",
    "Yara",
    "Beatriz",
    "Ifeoma",
    "Saoirse",
    "Roisin",
    "Catalina",
    "Linnea",
    "Aroha",
    "Shreya",
    "Ewa",
    "Mariam",
    "Bronwen",
    "Chiamaka",
    "Deepika",
    "Eilidh",
    "Gulnara",
    "Hyejin",
    "Ines",
    "Jadwiga",
    "Kemi",
    "Ludmila",
    "Mwajuma",
    "Noor",
    "Oksana",
    "Paloma",
    "Qiuyue",
    "Rukhsana",
    "Svetlana",
    "Tahmina",
    "Ulrike",
    "Vesna",
    "Wanjiru",
    "Xiaoling",
    "Yasmin",
    "Zeynep",
    "Adaeze",
    "Birgit",
    "Carmela",
    "Divya",
    "Efua",
    "Fionnuala",
    "Giulia",
    "Halima",
]

MALE_NAMES = [
    "Ravi",
    "Tomasz",
    "Kwame",
    "Hiroshi",
    "Mateo",
    "Oisin",
    "Arjun",
    "Emeka",
    "Lars",
    "Dmitri",
    "Yusuf",
    "Callum",
    "Jakub",
    "Kenji",
    "Rafael",
    "Tariq",
    "Finlay",
    "Chidi",
    "Anders",
    "Bilal",
    "Diego",
    "Hamish",
    "Ibrahim",
    "Kofi",
    "Luca",
    "Nikhil",
    "Omar",
    "Piotr",
    "Rohan",
    "Santiago",
    "Tobias",
    "Wei",
    "Yannick",
    "Zoltan",
    "Aled",
    "Bogdan",
    "Cillian",
    "Dev",
    "Eero",
    "Fergus",
    "Gideon",
    "Hassan",
    "Idris",
    "Joaquin",
    "Kai",
    "Mehmet",
    "Nuno",
    "Osman",
    "Pavel",
    "Quentin",
    "Rashid",
    "Soren",
    "Thiago",
    "Umar",
    "Vikram",
    "Wojciech",
    "Yosef",
    "Zeki",
    "Ahmed",
    "Babajide",
    "Cosmin",
    "Darius",
    "Elias",
    "Farid",
    "Gustavo",
    "Haruto",
    "Ilya",
    "Jovan",
    "Karim",
    "Lorcan",
    "Magnus",
    "Nnamdi",
    "Olusegun",
    "Pradeep",
    "Radek",
    "Sipho",
    "Tadeusz",
    "Ugo",
    "Vusi",
    "Xolani",
]

SURNAMES = [
    "Patel",
    "Okafor",
    "Nowak",
    "Tanaka",
    "Garcia",
    "Murphy",
    "Mensah",
    "Johansson",
    "Ivanova",
    "Khan",
    "O'Brien",
    "Kowalski",
    "Nakamura",
    "Fernandes",
    "Osei",
    "Lindqvist",
    "Haddad",
    "Chen",
    "MacLeod",
    "Adeyemi",
    "Rossi",
    "Yilmaz",
    "Sharma",
    "Novak",
    "Dubois",
    "Kariuki",
    "Petrov",
    "Silva",
    "Hughes",
    "Mahmoud",
    "Andersen",
    "Balogun",
    "Castillo",
    "Dimitriou",
    "Eriksen",
    "Farouk",
    "Gallagher",
    "Horvath",
    "Iqbal",
    "Jovanovic",
    "Kaur",
    "Lemaire",
    "Mbeki",
    "Nguyen",
    "Oyelaran",
    "Popescu",
    "Quispe",
    "Rahman",
    "Szabo",
    "Takahashi",
    "Uddin",
    "Varga",
    "Wiśniewski",
    "Xu",
    "Yamamoto",
    "Zielinski",
    "Abubakar",
    "Bergström",
    "Costa",
    "Delaney",
]

SUBJECTS = [
    "maths",
    "physics",
    "chemistry",
    "biology",
    "English literature",
    "English language",
    "French",
    "Spanish",
    "German",
    "history",
    "geography",
    "computer science",
    "economics",
    "Latin",
    "further maths",
    "psychology",
]

EXAM_BOARDS = ["AQA", "Edexcel", "OCR", "WJEC", "CCEA", "Cambridge International"]

CENTRE_NAMES = [
    "Brightpath Tutoring",
    "The Study Lantern",
    "Keystone Learning",
    "Northgate Tuition",
    "Maple Lane Tutors",
    "Crescent Learning Hub",
    "Harbourside Tutoring",
    "Willow Court Academy",
    "Summit Study Centre",
    "Riverbend Tuition",
    "Oakfield Learning",
    "Compass Tutoring",
]

CENTRE_TOWNS = [
    "Reading",
    "Harrogate",
    "Stockport",
    "Cheltenham",
    "Milton Keynes",
    "Luton",
    "Colchester",
    "Durham",
    "Shrewsbury",
    "Guildford",
    "Lancaster",
    "Worcester",
]

# Towns students moved from; each is used for at most one student per centre.
ORIGIN_TOWNS = [
    "Leeds",
    "Cardiff",
    "Glasgow",
    "Lagos",
    "Mumbai",
    "Kraków",
    "Lisbon",
    "Toronto",
    "Nairobi",
    "Dublin",
    "Belfast",
    "Bristol",
    "Norwich",
    "Aberdeen",
    "Leicester",
    "Bradford",
    "Swansea",
    "Hull",
    "Karachi",
    "Manila",
    "Auckland",
    "Accra",
    "Valencia",
    "Porto",
    "Gdańsk",
    "Istanbul",
    "Cork",
    "Inverness",
    "Exeter",
    "Plymouth",
    "Dhaka",
    "Bucharest",
    "Kampala",
    "Lyon",
    "Hamburg",
    "Adelaide",
]

SCHOOLS = [
    "St Aidan's Catholic High",
    "Hollybank Academy",
    "Fairmead School",
    "Kingsway Grammar",
    "Oakwood Primary",
    "Riverside Free School",
    "Beechcroft College",
    "Queen Eleanor's School",
    "Ashgrove Academy",
    "Thornfield High",
    "Westbury Park School",
    "Lark Hill Primary",
    "Marlowe Community College",
    "Greenacre Girls' School",
    "Castlegate Academy",
    "Harrow Vale School",
]

# Third-person hobby phrases; each is used for at most one student per centre.
HOBBIES = [
    "plays the cello in a youth orchestra",
    "swims competitively for a county club",
    "runs the chess club at school",
    "plays rugby for the under-15s",
    "performs Bharatanatyam dance",
    "builds Minecraft mods",
    "sings in a gospel choir",
    "goes birdwatching on the marshes",
    "rows at the local rowing club",
    "plays cricket for the county juniors",
    "trains in kickboxing",
    "builds model railways",
    "plays the tabla",
    "volunteers at an animal shelter",
    "does parkour in the park",
    "plays goal attack in netball",
    "skateboards at the town skate park",
    "competes in Irish dancing",
    "plays the violin in a string quartet",
    "writes fan fiction online",
    "holds a green belt in judo",
    "fences épée",
    "plays water polo",
    "draws manga comics",
    "competes in debating tournaments",
    "plays drums in a garage band",
    "rides horses at a stable near the ring road",
    "does artistic gymnastics",
    "plays point guard in basketball",
    "bakes sourdough bread",
    "runs cross-country for the school",
    "collects fossils on the coast",
    "plays the oboe",
    "flies drones",
    "keeps bees with a grandparent",
    "plays table tennis in a league",
    "does stand-up comedy at a youth club",
    "restores old bicycles",
    "plays the bagpipes",
    "sails dinghies at weekends",
]

GOALS = [
    "wants to study medicine",
    "hopes to become a vet",
    "is aiming to study architecture",
    "wants to join the Royal Navy as an engineer",
    "hopes to win a place at a grammar school",
    "wants to read law at university",
    "dreams of a place at a music conservatoire",
    "wants to train as a pilot",
    "is keen on a computer science degree",
    "hopes to train as a midwife",
    "wants to become a pharmacist",
    "is set on an apprenticeship in civil engineering",
    "wants to study marine biology",
    "hopes to become a primary school teacher",
    "wants to work in game design",
    "plans to study economics",
]

NEEDS = [
    "has dyslexia and reads slowly under pressure",
    "has ADHD and works best in short bursts",
    "gets very anxious before tests",
    "is colour-blind, so red and green diagrams are a problem",
    "has dyscalculia",
    "is hard of hearing in the left ear and should sit on the right",
    "is entitled to 25% extra time in exams",
    "is autistic and likes a fixed routine",
    "has dyspraxia and finds handwriting tiring",
    "needs a laptop for longer written work",
    "has a stammer and dislikes reading aloud",
    "gets migraines under bright lights",
]

STYLES = [
    "learns best from worked examples",
    "likes to talk problems through out loud",
    "prefers diagrams and mind maps",
    "works better with short quizzes",
    "needs printed sheets rather than screens",
    "remembers things best through flashcards",
    "responds well to a bit of friendly competition",
    "likes to see the mark scheme before starting",
]

PARENT_ROLES_FEMALE = ["mum", "grandmother", "aunt", "stepmum"]
PARENT_ROLES_MALE = ["dad", "grandfather", "uncle", "stepdad"]

CONTACTS = [
    "by text message",
    "by email only",
    "by phone after 6pm",
    "on WhatsApp",
    "through the parent app",
    "by phone during the lunch hour",
]

JOBS = [
    "paramedic",
    "bus driver",
    "software developer",
    "pharmacist",
    "train conductor",
    "solicitor",
    "baker",
    "electrician",
    "night-shift nurse",
    "taxi driver",
    "dentist",
    "civil servant",
    "chef",
    "postal worker",
    "accountant",
    "hairdresser",
    "firefighter",
    "lab technician",
    "warehouse manager",
    "midwife",
]

TUTOR_BACKGROUNDS = [
    "used to be a chemical engineer",
    "is finishing a PhD in astrophysics",
    "taught in secondary schools for twenty years",
    "worked as a professional translator",
    "was a hospital pharmacist",
    "is a retired army officer",
    "trained as a concert pianist",
    "spent a decade as an actuary",
    "was an exam marker for several years",
    "ran a bookshop before tutoring",
    "worked in a research lab studying malaria",
    "was a journalist on a regional paper",
]

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]

# ---------------------------------------------------------------------------------------------------------
# Fact templates. In memory templates {s} is the person's name and {v} the value. In question templates {who}
# stands for the person, named or described ("Ravi's sister", "the student who moved here from Leeds").

STUDENT_FACTS: dict[str, dict[str, list[str]]] = {
    "year": {
        "memory": [
            "{s} is in Year {v} this school year.",
            "{s} has just gone into Year {v}.",
            "Quick note: {s} is a Year {v} pupil.",
            "{s} started Year {v} in September.",
        ],
        "single": ["What year is {who} in?", "Which Year group is {who} in?"],
        "paraphrase": [
            "At what stage of their schooling is {who} at the moment?",
            "What grade level has {who} reached?",
            "How far along in education is {who} right now?",
        ],
    },
    "school": {
        "memory": [
            "{s} goes to {v}.",
            "{s} attends {v}.",
            "{s} is a pupil at {v}.",
            "{s} transferred to {v} last year.",
        ],
        "single": ["Which school does {who} go to?", "What school does {who} attend?"],
        "paraphrase": [
            "Where is {who} educated during the week?",
            "Which institution does {who} study at by day?",
        ],
    },
    "struggle": {
        "memory": [
            "{s} finds {v} really hard.",
            "{s} is struggling with {v}.",
            "{v} is the weakest subject for {s} right now.",
            "{s} keeps dropping marks in {v}.",
        ],
        "single": [
            "Which subject does {who} find hard?",
            "What subject is {who} struggling with?",
            "Which subject is weakest for {who}?",
        ],
        "paraphrase": [
            "What area of study gives {who} the most trouble?",
            "Where does {who} need the most help academically?",
            "Which topic area is a difficulty for {who}?",
        ],
    },
    "goal": {
        "memory": [
            "{s} {v}.",
            "{s} told me they {v_base}.",
            "Long-term, {s} {v}.",
            "Career plans: {s} {v}.",
        ],
        "single": ["What does {who} want to do in the future?", "What are the career plans of {who}?"],
        "paraphrase": [
            "What ambition does {who} have after leaving education?",
            "Which path is {who} hoping for later in life?",
            "What would {who} like to become eventually?",
        ],
    },
    "need": {
        "memory": [
            "{s} {v}.",
            "Heads-up for tutors: {s} {v}.",
            "{s} {v} — worth remembering in sessions.",
            "The registration form says {s} {v}.",
        ],
        "single": [
            "What should tutors remember in sessions with {who}?",
            "What does the registration form say about {who}?",
        ],
        "paraphrase": [
            "Is there any special consideration staff should keep in mind when teaching {who}?",
            "What additional support requirement applies to {who}?",
        ],
    },
    "hobby": {
        "memory": [
            "{s} {v}.",
            "Outside school, {s} {v}.",
            "Fun fact: {s} {v}.",
            "{s} mentioned that they {v_base}.",
        ],
        "single": ["What does {who} do outside school?", "What did {who} mention doing for fun?"],
        "paraphrase": [
            "How does {who} spend free time?",
            "What pastime does {who} enjoy?",
            "Which leisure activity is {who} into?",
        ],
    },
    "origin": {
        "memory": [
            "{s} moved here from {v} last summer.",
            "{s}'s family relocated from {v}.",
            "{s} joined us after moving from {v}.",
            "{s} used to live in {v}.",
        ],
        "single": ["Where did {who} move from?", "Where did {who} live before?"],
        "paraphrase": [
            "Which place was home for {who} before coming to the area?",
            "What city or town is {who} originally from?",
        ],
    },
    "style": {
        "memory": [
            "{s} {v}.",
            "Tip for whoever teaches {s}: they {v_base}.",
            "{s} {v}, so plan sessions around that.",
            "Noticed that {s} {v}.",
        ],
        "single": ["How does {who} learn best?", "What should a tutor plan sessions around for {who}?"],
        "paraphrase": [
            "Which teaching approach suits {who}?",
            "What method of instruction works for {who}?",
        ],
    },
}

PARENT_FACTS: dict[str, dict[str, list[str]]] = {
    "contact": {
        "memory": [
            "{s} prefers to be contacted {v}.",
            "Best way to reach {s}: {v}.",
            "{s} asked us to get in touch {v}.",
            "{s} would rather we reach them {v}.",
        ],
        "single": ["How does {who} prefer to be contacted?", "What is the best way to reach {who}?"],
        "paraphrase": [
            "Through which channel should the centre get hold of {who}?",
            "How would {who} like the office to communicate?",
        ],
    },
    "job": {
        "memory": [
            "{s} works as a {v}.",
            "{s} is a {v} by trade.",
            "{s} mentioned they work as a {v}.",
            "Job-wise, {s} is a {v}.",
        ],
        "single": ["What does {who} work as?", "What is the job of {who}?"],
        "paraphrase": [
            "What occupation does {who} have?",
            "How does {who} earn a living?",
            "What is the profession of {who}?",
        ],
    },
}

TUTOR_FACTS: dict[str, dict[str, list[str]]] = {
    "background": {
        "memory": [
            "{s} {v}.",
            "Background on {s}: they {v_base}.",
            "Chatted with {s} over coffee — they {v}.",
            "For the record, {s} {v}.",
        ],
        "single": ["What is the background of {who}?", "What did {who} say over coffee about themselves?"],
        "paraphrase": [
            "What prior career experience does {who} bring?",
            "What has {who} done professionally?",
        ],
    },
    "dayoff": {
        "memory": [
            "{s} doesn't work on {v}s.",
            "{s} is never in on {v}s.",
            "{s} has {v}s off.",
            "No sessions with {s} on {v}s.",
        ],
        "single": ["Which day does {who} not work?", "On which day are there no sessions with {who}?"],
        "paraphrase": [
            "On what day is {who} unavailable?",
            "When can the centre not book {who}?",
        ],
    },
    "subjects": {
        "memory": [
            "{s} covers {v}.",
            "{s} teaches {v}.",
            "{s} is our go-to for {v}.",
            "Subjects for {s}: {v}.",
        ],
        "single": ["What subjects does {who} teach?", "Which subjects does {who} cover?"],
        "paraphrase": [
            "In which disciplines can {who} help a pupil?",
            "What can {who} tutor?",
        ],
    },
}

# Bridges between two people. {a} is the person the question names, {b} the person it asks about.
SIBLING_TEMPLATES = [
    "{a} and {b} are siblings.",
    "{a}'s {rel} {b} also comes here.",
    "{a}'s {rel}, {b}, has signed up too.",
    "{b} is {a}'s {rel}.",
]
PARENT_CHILD_TEMPLATES = [
    "{p} is {c}'s {role}.",
    "{c}'s {role} is {p}.",
    "{p}, {c}'s {role}, came in to register them.",
    "{c} was dropped off by their {role}, {p}.",
]
ASSIGNMENT_TEMPLATES = [
    "{t} is {s}'s {subj} tutor.",
    "{s} has {t} for {subj}.",
    "{t} has taken on {s} for {subj}.",
    "{s}'s {subj} sessions are with {t}.",
]
PARTNER_TEMPLATES = [
    "{a} and {b} are study partners for {subj}.",
    "Paired {a} with {b} for {subj} revision.",
    "{a} has been revising {subj} with {b}.",
    "{b} and {a} now do their {subj} homework together.",
]
TUTOR_OF_QUESTIONS = ["Who tutors {who} in {subj}?", "Which tutor does {who} have for {subj}?"]

# Plans that change.
SESSION_ORIGINAL = [
    "Booked {s}'s {subj} session for {when}.",
    "{s} has a {subj} session on {when}.",
    "{p} confirmed {s}'s {subj} lesson for {when}.",
    "{s}'s {subj} catch-up is set for {when}.",
]
SESSION_CHANGE_ABSOLUTE = [
    "{s}'s {subj} session has moved to {when}.",
    "Change of plan: {s}'s {subj} lesson is now on {when}.",
    "{p} asked to move {s}'s {subj} session to {when}.",
    "Rescheduled {s}'s {subj} session, new slot {when}.",
]
# Relative changes: (template, days shifted, hours shifted).
SESSION_CHANGE_RELATIVE = [
    ("{s}'s {subj} session is pushed back a week, same time.", 7, 0),
    ("{s}'s {subj} lesson moves one day later, same time.", 1, 0),
    ("{s}'s {subj} session is brought forward by two days, same time.", -2, 0),
    ("{s}'s {subj} session stays on the same day but starts an hour later.", 0, 1),
]
SESSION_QUESTIONS_NOW = [
    "When is {s}'s {subj} session now?",
    "After the change, when does {s} have their {subj} lesson?",
    "What is the current slot for {s}'s {subj} session?",
]
SESSION_QUESTIONS_ORIGINAL = [
    "When was {s}'s {subj} session originally booked for?",
    "Before it was moved, when was {s}'s {subj} session?",
]
EXAM_ORIGINAL = [
    "{s}'s {board} {subj} mock exam is on {when}.",
    "{s} sits the {subj} mock ({board}) on {when}.",
    "Mock exam for {s}: {subj}, {when}.",
    "{p} says {s}'s {subj} mock is on {when}.",
]
EXAM_CHANGE_ABSOLUTE = [
    "{s}'s {subj} mock has been rescheduled to {when}.",
    "The {subj} mock for {s} is now on {when}.",
    "{p} rang: {s}'s {subj} mock has moved to {when}.",
    "Update — {s} now sits the {subj} mock on {when}.",
]
EXAM_CHANGE_RELATIVE = [
    ("{s}'s {subj} mock has been put back a week.", 7, 0),
    ("{s}'s {subj} mock is three days later than planned.", 3, 0),
    ("{s}'s {subj} mock has been brought forward by a day.", -1, 0),
    ("{s}'s {subj} mock has been delayed by two weeks.", 14, 0),
]
EXAM_QUESTIONS_NOW = [
    "When is {s}'s {subj} mock exam now?",
    "What is the current date of {s}'s {subj} mock?",
    "After the rescheduling, when does {s} sit the {subj} mock?",
]
EXAM_QUESTIONS_ORIGINAL = [
    "When was {s}'s {subj} mock originally planned?",
    "What date was {s}'s {subj} mock before it moved?",
]

# Dated events: (past phrase, base phrase for "when did" questions, noun phrase for "week before/after").
EVENTS = [
    ("had a trial lesson", "have a trial lesson", "their trial lesson"),
    ("sat a timed practice paper", "sit the timed practice paper", "the timed practice paper"),
    ("took the diagnostic assessment", "take the diagnostic assessment", "the diagnostic assessment"),
    ("got their mock results back", "get their mock results back", "getting the mock results back"),
    ("missed a session through illness", "miss a session through illness", "the missed session"),
    ("had a progress review", "have a progress review", "the progress review"),
    ("handed in a coursework draft", "hand in the coursework draft", "handing in the coursework draft"),
    ("did an oral practice run", "do the oral practice run", "the oral practice run"),
    ("moved up to the advanced group", "move up to the advanced group", "moving up to the advanced group"),
    ("won a prize in a maths challenge", "win the maths challenge prize", "the maths challenge prize"),
    ("started a new homework plan", "start the new homework plan", "starting the new homework plan"),
    ("broke their wrist at football", "break their wrist", "the broken wrist"),
]
EVENT_MEMORY = [
    "{s} {past} {when}.",
    "{When}, {s} {past}.",
    "Note: {s} {past} {when}.",
    "{p} told me {s} {past} {when}.",
]
EVENT_WHEN_QUESTIONS = ["When did {s} {base}?", "On what date did {s} {base}?"]
EVENT_AFTER_QUESTIONS = [
    "What happened with {s} in the week after {np}?",
    "In the days following {np}, what did {s} do?",
]
EVENT_BEFORE_QUESTIONS = [
    "What happened with {s} in the week before {np}?",
    "In the days leading up to {np}, what did {s} do?",
]

# Codes.
INVOICE_TEMPLATES = [
    "{p} paid invoice {code} ({amt}) for {s}'s {subj} sessions.",
    "Invoice {code} for {amt} sent to {p} — {s}'s {subj} block.",
    "{p} settled {code}: {amt}, {s}'s {subj} lessons.",
    "Payment received on {code} from {p}: {amt} for {s}'s {subj} tuition.",
]
INVOICE_QUESTIONS = [
    "How much was invoice {code}?",
    "Who paid invoice {code}?",
    "Which student is invoice {code} for?",
    "What subject does {code} cover?",
]
BOOKING_TEMPLATES = [
    "Booking ref {code}: {s}'s {subj} mock exam slot.",
    "Reserved a quiet study room for {s}, booking {code}.",
    "{p} booked {s} onto the half-term {subj} intensive, reference {code}.",
    "{s}'s place on the Easter {subj} revision course is booking {code}.",
]
BOOKING_QUESTIONS = [
    "Whose booking is {code}?",
    "Which student is booking {code} for?",
    "What is booking {code}?",
]
ROOM_TEMPLATES = [
    "{t}'s {day} {subj} group meets in room {code}.",
    "Moved {t}'s {subj} group to room {code}.",
    "Room {code} is where {t} runs {subj} on {day}s.",
    "{t} has asked for room {code} for {subj} from now on.",
]
ROOM_QUESTIONS = ["Who teaches in room {code}?", "Which subject is taught in room {code}?"]
VOUCHER_TEMPLATES = [
    "{p} used discount code {code} on {s}'s sign-up, saving {amt}.",
    "Discount code {code} applied for {p} ({s}), {amt} off.",
    "{p} redeemed voucher {code}: {amt} off {s}'s first month.",
    "Gave {p} the referral code {code}; it took {amt} off {s}'s fees.",
]
VOUCHER_QUESTIONS = ["Which family used code {code}?", "How much did {code} save?"]
LOAN_TEMPLATES = [
    "{s} borrowed the graphing calculator tagged {code}.",
    "Lent {s} the revision guide with sticker {code}.",
    "{s} has taken home laptop {code} for the coursework.",
    "Headphones {code} are out on loan to {s}.",
]
LOAN_QUESTIONS = ["Who has {code} at the moment?", "Which student borrowed {code}?"]

# Everyday chatter that answers no question. {p} is a parent or guardian.
CHATTER_CENTRE = [
    "The heating in the upstairs rooms is playing up again.",
    "Someone left a blue umbrella in reception.",
    "The biscuit tin in the staff room needs refilling.",
    "The printer jammed twice this afternoon.",
    "Wi-Fi dropped out for about ten minutes during the evening sessions.",
    "Whiteboard markers are running low; order more.",
    "The window cleaner came round this morning.",
    "Reception smells of fresh paint after the weekend touch-up.",
    "Reminder to self: water the plants on the landing.",
    "The kettle in the kitchen is making a strange noise.",
    "A pigeon got into the corridor and caused chaos for a bit.",
    "The lift was out of order for most of the day.",
    "Lost property box is overflowing with water bottles.",
    "Quiet afternoon; most of the staff were catching up on marking.",
    "Someone brought in a cake for no particular reason, much appreciated.",
    "The radiator in the small room is finally fixed.",
    "The noticeboard could do with tidying up.",
    "Stacked the spare chairs in the back office.",
]
CHATTER_PARENT = [
    "{p} said the traffic on the way in was terrible.",
    "{p} is off to visit relatives over the holidays.",
    "{p} complimented the new plants in reception.",
    "{p} mentioned their dog just had puppies.",
    "The car park was full again, so {p} had to park on the street.",
    "{p} brought in a box of homemade samosas for the staff.",
    "{p} said the weather has been awful for the school run.",
    "{p} was asking where we got the reception sofa.",
    "{p} has taken up running and is doing a half marathon.",
    "{p} chatted about the new café on the high street.",
    "{p} left a thank-you card at the front desk.",
    "{p} mentioned their boiler broke at the weekend.",
    "{p} is redecorating the kitchen and it is taking forever.",
    "{p} asked if we knew a good plumber; we didn't.",
    "{p} said the local bakery has started doing gluten-free bread.",
    "{p} was in a rush today and barely stopped to say hello.",
]
