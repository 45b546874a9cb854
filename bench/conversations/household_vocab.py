"""Vocabulary of the household set (bench/conversations/household.py): names, places, things, and the
sentence templates of its memories and questions."""

from __future__ import annotations

MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

ADULTS = [
    "Amara", "Tomasz", "Noor", "Diego", "Ingeborg", "Kwame", "Mei", "Rahul", "Sofia", "Yusuf", "Hana",
    "Mateus", "Leila", "Bogdan", "Aiko", "Femi", "Carmen", "Anders", "Priyanka", "Olek", "Zanele", "Jonas",
    "Farida", "Luca", "Nadia", "Emeka", "Siobhan", "Kenji",
]  # fmt: skip
KIDS = [
    "Leo", "Zara", "Ayaan", "Mila", "Kofi", "Ines", "Oskar", "Lina", "Tariq", "Freya", "Ravi", "Elif",
    "Mateo", "Yara", "Nico", "Amani", "Sami", "Ada", "Jun", "Maya", "Idris", "Noa", "Arjun", "Saoirse",
    "Tobi", "Liv", "Emre", "Chiara", "Malik", "Esme",
]  # fmt: skip
FEMALE = [
    "Ingrid", "Halima", "Maren", "Teodora", "Ludmila", "Rosalind", "Beatriz", "Delphine", "Fatou", "Ilse",
    "Katarzyna", "Marisol", "Orla", "Rukmini", "Thandiwe", "Valentina", "Ximena", "Yevgenia", "Agnieszka",
    "Cosima", "Esperanza", "Gulnara", "Ilaria", "Kalinda", "Nasrin", "Perpetua", "Sunniva", "Umaima", "Vesna",
    "Yusra", "Anouk", "Celestine", "Dagny", "Folake", "Hyacinth", "Isolde", "Ligaya", "Mirela", "Nkechi",
    "Ottilie", "Renata", "Tindra", "Ulrike",
]  # fmt: skip
MALE = [
    "Rafael", "Giorgos", "Olufemi", "Vikram", "Abebe", "Haruto", "Casimir", "Eero", "Gunnar", "Jovan",
    "Lorenzo", "Nikhil", "Pavel", "Quentin", "Stellan", "Ugo", "Wiremu", "Zoltan", "Bashir", "Dmitri", "Florin",
    "Hamish", "Jaroslav", "Lucian", "Magnus", "Oisin", "Radek", "Tadeo", "Wolfgang", "Zygmunt", "Benedikt",
    "Emilio", "Gideon", "Jakub", "Kasimir", "Piotr", "Sander",
]  # fmt: skip
OTHERS = FEMALE + MALE
FEMALE_RELATIONS = {"grandmother", "aunt", "godmother", "mother-in-law", "sister-in-law"}
MALE_RELATIONS = {"grandfather", "uncle", "godfather", "father-in-law", "brother-in-law"}
SURNAMES = [
    "Okafor", "Lindqvist", "Haddad", "Varga", "Mensah", "Kowalczyk", "Tanaka", "Ferreira", "Nakamura", "Osei",
    "Petrovic", "Gallagher", "Rahman", "Moreau", "Adeyemi", "Novak", "Castellanos", "Bjorklund", "Chaudhry",
    "Papadakis", "Dlamini", "Fitzgerald", "Sorensen", "Abara", "Rossi", "Yilmaz", "Horvath", "Kariuki",
    "Delacroix", "Vasquez", "Ivanova", "MacLeod", "Ndiaye", "Quispe", "Sato", "Brennan",
]  # fmt: skip
PETS = [
    "Biscuit", "Pepper", "Mochi", "Juniper", "Waffles", "Pistachio", "Tofu", "Marmite", "Clementine",
    "Noodle", "Bramble", "Sprout", "Ziggy", "Pumpkin", "Olive", "Dumpling", "Fig", "Truffle",
]  # fmt: skip
# species, breed, a plain description used by paraphrases
SPECIES = [
    ("dog", "beagle", "hound"), ("dog", "spaniel", "hound"), ("cat", "tabby", "moggy"),
    ("cat", "Siamese", "moggy"), ("rabbit", "lop-eared rabbit", "bunny"), ("dog", "whippet", "hound"),
]  # fmt: skip
CITIES = [
    "Tampere", "Porto", "Kraków", "Accra", "Valencia", "Leeds", "Cork", "Thessaloniki", "Lyon", "Gdańsk",
    "Nairobi", "Bergen", "Izmir", "Bologna", "Osaka", "Quito", "Durban", "Ghent", "Tallinn", "Halifax",
]  # fmt: skip
DESTINATIONS = [
    "Lisbon", "the Algarve", "Copenhagen", "Vienna", "Lake Bled", "Marrakesh", "Seville", "Edinburgh",
    "the Dolomites", "Crete", "Bruges", "Dubrovnik", "Sardinia", "Reykjavik", "the Lake District",
]  # fmt: skip
SCHOOLS = [
    "Riverside Primary", "Hillcrest Academy", "St Brigid's", "Maple Grove Primary", "Northgate Academy",
    "Willowbank Primary", "Kingsmead", "Larchfield Primary", "Harbourview Academy", "Elmhurst Primary",
]  # fmt: skip
# activity, venue, a description without the activity's words
CLUBS = [
    ("judo", "the Sakura Dojo", "martial arts"), ("swimming", "Lakeside Pool", "lengths in the water"),
    ("chess club", "the community library", "board-game strategy"), ("football", "Parkfield Rec", "kicking a ball about"),
    ("violin lessons", "the Conservatoire annex", "bowed strings"), ("ballet", "Arabesque Studio", "dance in tutus"),
    ("coding club", "the Tech Hub", "programming computers"), ("gymnastics", "Flip Factory", "tumbling and vaulting"),
    ("scouts", "the Oak Lane hall", "camping badges"), ("climbing", "the Boulder Barn", "scaling walls"),
    ("piano lessons", "Mrs Abara's front room", "keyboard music"), ("drama club", "the Little Theatre", "acting on stage"),
]  # fmt: skip
# appointment, clinic word, a description used by paraphrases
APPOINTMENTS = [
    ("dentist check-up", "Who will examine {p}'s teeth?"), ("eye test", "Who will examine {p}'s vision?"),
    ("GP review", "Which family doctor has {p} got an appointment with?"),
    ("orthodontist fitting", "Who will adjust {p}'s brace?"), ("physio session", "Who gives {p} muscle therapy?"),
    ("hearing test", "Who will examine {p}'s ears?"), ("flu jab", "Who gives {p} the influenza injection?"),
    ("dermatology consultation", "Which skin specialist is {p} down to visit?"),
    ("blood test", "Who will draw {p}'s sample for the lab?"), ("asthma clinic", "Who reviews {p}'s breathing?"),
]  # fmt: skip
# food, a description used by paraphrases
ALLERGENS = [
    ("peanuts", "groundnut"), ("sesame", "tahini seed"), ("shellfish", "prawns or crab"), ("kiwi", "fuzzy green fruit"),
    ("egg", "omelette ingredient"), ("tree nuts", "almonds or cashews"), ("milk", "dairy"), ("wheat", "gluten grain"),
]  # fmt: skip
FAVOURITES = [
    ("mango lassi", "yoghurt fruit drink"), ("sourdough", "tangy loaf"), ("halloumi", "squeaky grilling cheese"),
    ("dark chocolate", "bitter cocoa bar"), ("oat milk", "dairy-free cereal drink"), ("pickled herring", "marinated fish"),
    ("plantain chips", "crispy banana snack"), ("miso soup", "fermented bean broth"), ("olives", "briny stone fruit"),
    ("blueberries", "small purple berries"), ("falafel", "chickpea fritters"), ("kimchi", "spicy fermented cabbage"),
]  # fmt: skip
GIFTS = [
    ("a Lego space shuttle", "brick-built spacecraft"), ("noise-cancelling headphones", "quiet-ears audio gear"),
    ("a telescope", "stargazing instrument"), ("a sourdough starter kit", "bread-making set"),
    ("watercolour paints", "art supplies"), ("a rain jacket", "waterproof coat"), ("a cookbook", "recipe volume"),
    ("hiking boots", "walking footwear"), ("a board game", "tabletop entertainment"), ("a bird feeder", "garden perch"),
]  # fmt: skip
COLLECTS = [
    ("enamel teapots", "old kettles for brewing"), ("stamps", "postage"), ("vinyl records", "LPs"),
    ("snow globes", "shaken winter domes"), ("antique maps", "charts of old"), ("model trains", "miniature railways"),
    ("cacti", "spiky succulents"), ("postcards", "holiday greetings cards"), ("jigsaw puzzles", "interlocking pictures"),
]  # fmt: skip
JOBS = [
    "a pharmacist", "a bus driver", "a midwife", "an architect", "a ferry captain", "a primary teacher",
    "a baker", "a radiographer", "a translator", "a beekeeper", "a judge", "a florist",
]  # fmt: skip
RELATIONS = [
    "grandmother", "grandfather", "aunt", "uncle", "cousin", "godmother", "godfather", "mother-in-law",
    "father-in-law", "sister-in-law", "brother-in-law", "neighbour",
]  # fmt: skip
KID_RELATIONS = [
    "grandmother",
    "grandfather",
    "aunt",
    "uncle",
    "cousin",
    "godmother",
    "godfather",
    "neighbour",
]
# trade, issue, a description of the issue used by paraphrases
REPAIRS = [
    ("plumber", "leaking kitchen tap", "dripping sink faucet"), ("electrician", "tripping fuse box", "circuit breaker cutting out"),
    ("roofer", "loose roof tiles", "slates coming off up top"), ("glazier", "cracked bathroom window", "broken pane"),
    ("boiler engineer", "boiler pressure fault", "heating unit losing bar"), ("carpenter", "sticking back door", "jammed rear entrance"),
    ("locksmith", "jammed front lock", "stuck entrance latch"), ("gardener", "overgrown hedge", "unruly shrubbery"),
    ("plasterer", "damp hallway wall", "mouldy corridor partition"), ("handyman", "wobbly stair banister", "unsteady handrail"),
    ("appliance engineer", "broken washing machine", "laundry appliance failure"),
    ("chimney sweep", "blocked chimney flue", "sooty fireplace duct"),
]  # fmt: skip
# item, a description used by paraphrases
ITEMS = [
    ("football boots", "studded sports shoes"), ("school blazer", "uniform jacket"), ("bike helmet", "cycling headgear"),
    ("desk lamp", "reading light"), ("winter coat", "cold-weather parka"), ("swimming goggles", "pool eyewear"),
    ("graphics calculator", "maths gadget"), ("dog bed", "pet cushion"), ("car seat", "child travel restraint"),
    ("printer cartridge", "ink refill"), ("wellington boots", "rubber rain footwear"), ("lunchbox", "midday food container"),
    ("violin case", "instrument carrier"), ("duvet", "bed quilt"), ("blender", "smoothie machine"),
    ("rucksack", "backpack"), ("reading glasses", "spectacles"), ("bird-watching guide", "ornithology handbook"),
]  # fmt: skip
SHOPS = ["Northwind Outfitters", "Harbour Home", "Bramley & Co", "KiddoKit", "Pixel Depot", "Green Basket"]
POLICIES = [
    "home insurance",
    "car insurance",
    "pet insurance",
    "travel insurance",
    "boiler cover",
    "contents insurance",
]
UTILITIES = ["electricity", "water", "broadband", "gas", "council tax", "mobile phone"]
INCIDENTS = [
    "sprained an ankle at the trampoline park", "lost a front tooth during lunch", "won the class spelling prize",
    "broke a wrist falling off the climbing frame", "got a splinter removed at the walk-in clinic",
    "came home with head lice", "was picked for the county choir", "had a nosebleed during assembly",
    "got stung by a wasp at the allotment", "passed a grade three piano exam",
]  # fmt: skip
TRIP_CHANGE_REASONS = [
    "the ferry operator went on strike", "a passport had expired", "the cottage owner double-booked",
    "a grandparent fell ill", "the flights were cancelled",
]  # fmt: skip

T = {
    "school": [
        "{p} is enrolled at {school} for the coming year.",
        "{p} started at {school} this term and likes it so far.",
        "{p}'s school is {school}, a short walk from the house.",
    ],
    "school_q": [
        "Which school is {p} enrolled at?",
        "Which school did {p} start at this term?",
        "What is the name of {p}'s school?",
    ],
    "school_p": ["Where does {p} spend weekday lessons?", "Which place of education does {p} go to?"],
    "teacher": [
        "{p}'s class teacher this year is {who}.",
        "{who} is {p}'s new class teacher, starting in September.",
        "{p} says the class teacher, {who}, is strict but fair.",
    ],
    "teacher_change": [
        "{p}'s class teacher {old} went on leave; {who} is covering until the summer.",
        "{p} has a different class teacher now: {who} replaced {old}.",
    ],
    "teacher_q": [
        "Who is {p}'s class teacher this year?",
        "Who is {p}'s new class teacher?",
        "What is the name of {p}'s class teacher?",
    ],
    "teacher_now": ["Who is {p}'s class teacher now?", "Which class teacher does {p} have at the moment?"],
    "teacher_p": ["Who instructs {p}'s form group?", "Who leads the form {p} belongs to?"],
    "club": [
        "{p} has {act} at {venue} every {day}.",
        "{p} goes to {act} at {venue} on {day}s.",
        "Every {day} {p} is at {venue} for {act}.",
    ],
    "club_change": [
        "{p}'s {act} has moved from {old}s to {day}s.",
        "From now on {p}'s {act} is on {day}, not {old}.",
    ],
    "club_q": ["On which day does {p} have {act}?", "Where does {p} go for {act}?"],
    "club_now": ["Which day is {p}'s {act} on now?"],
    "club_p": ["Which weekday is reserved for {p}'s {desc}?", "When in the week does {p} do {desc}?"],
    "coach": [
        "{who} is the head coach at {venue} and has run it for years.",
        "{venue} is run by a coach called {who}.",
    ],
    "coach_m": [
        "Who coaches at the place where {p} does {act}?",
        "What is the name of the coach for {p}'s {act}?",
    ],
    "appt": [
        "{p} is booked in with {doc} for the {appt} on {date}.",
        "{p}'s {appt} is booked with {doc} for {date}.",
        "{doc} will see {p} on {date} for the {appt}.",
    ],
    "appt_move": [
        "{p}'s {appt} has been moved to {date} by the practice.",
        "The clinic rescheduled {p}'s {appt} to {date}.",
        "{p}'s {appt} is now on {date} instead of the original day.",
    ],
    "appt_q": ["Who is doing {p}'s {appt}?", "Which practitioner is {p}'s {appt} with?"],
    "appt_when": ["When is {p}'s {appt}?", "On what date is {p}'s {appt}?"],
    "appt_now": ["When is {p}'s {appt} now?", "What is the new date of {p}'s {appt}?"],
    "allergy": [
        "Tests at the clinic showed {p} is allergic to {food}.",
        "{p} reacts badly to {food}; keep it out of the house.",
    ],
    "allergy_change": [
        "A new test showed {p} is not allergic to {old} after all, but to {food}.",
        "The allergist revised {p}'s result: {food}, not {old}, is the problem.",
    ],
    "allergy_q": ["What did the tests show {p} is allergic to?", "What does {p} react badly to?"],
    "allergy_now": [
        "What is {p} allergic to according to the latest test?",
        "Which allergy does {p} have now?",
    ],
    "allergy_p": ["Which ingredient must be avoided in {p}'s meals?"],
    "fav": [
        "{p} loves {food} and asks for some on every shop.",
        "Put {food} on the grocery list for {p} every week.",
        "{p}'s favourite snack at the moment is {food}.",
    ],
    "fav_q": [
        "Which food does {p} love?",
        "What should go on the grocery list for {p}?",
        "What is {p}'s favourite snack?",
    ],
    "fav_p": ["What treat would make {p} happy?"],
    "gift": ["{p} would like {gift} as a present this year.", "For the birthday, {p} has asked for {gift}."],
    "gift_q": ["What present would {p} like this year?", "What has {p} asked for, for the birthday?"],
    "gift_p": ["What does {p} wish to receive?"],
    "bday": [
        "{p}'s birthday is on {date}, and a party is being planned.",
        "{p} turns a year older on {date} and wants a small party.",
    ],
    "bday_q": ["When is {p}'s birthday?"],
    "link": [
        "{p}'s {rel} is called {who}, and they are very close.",
        "{who} is {p}'s {rel} and visits every few weeks.",
        "{p} mentioned {rel} {who} again today, fondly.",
    ],
    "link_pet": [
        "{p}'s {rel} {who} has a {breed} called {pet}.",
        "{who}, {p}'s {rel}, owns a {breed} named {pet}.",
    ],
    "city": [
        "{who} lives in {city}, in a flat above a bakery.",
        "{who} lives in {city} now, having moved there for work.",
        "{who} still lives in {city}, close to the old market.",
    ],
    "city_q": ["Where does {who} live?"],
    "city_p": ["Which town is {who}'s home?"],
    "city_m": ["Where does {p}'s {rel} live?", "In which city is {p}'s {rel} based?"],
    "collect": [
        "{who} collects {thing} and has shelves full of them.",
        "{who} has a huge collection of {thing} at the house.",
    ],
    "collect_q": ["What does {who} collect?", "What does {who} have a huge collection of?"],
    "collect_p": ["What does {who} like to gather as a hobby?"],
    "collect_m": ["What does {p}'s {rel} collect?"],
    "job": [
        "{who} works as {job} and often does weekend shifts.",
        "{who} has been {job} for twenty years now, and loves it.",
    ],
    "job_q": ["What does {who} work as?", "What has {who} been for twenty years?"],
    "job_m": ["What is the job of {p}'s {rel}?"],
    "rbday": [
        "{who}'s birthday falls on {date}; a card should go out a week before.",
        "{who} celebrates a birthday on {date} every year with a big lunch.",
    ],
    "rbday_m": ["When is the birthday of {p}'s {rel}?"],
    "vet": ["{pet} is treated by {doc} at {clinic}.", "{pet} sees {doc}, the vet at {clinic}."],
    "vet_m": ["What is the name of the vet who treats the {species} of {p}'s {rel}?"],
    "pet": [
        "The family {breed}, {pet}, is registered with {doc} at {clinic}.",
        "{p} walks the family {breed}, {pet}, most mornings.",
    ],
    "pet_vet": ["{pet} is registered with {doc} at {clinic}."],
    "pet_m": ["Which vet looks after the {species} {p} walks?"],
    "vacc": [
        "{pet}'s booster vaccination is due on {date}.",
        "{pet} needs a booster jab at the vet on {date}, in the morning.",
    ],
    "vacc_q": ["When is {pet}'s booster vaccination due?"],
    "chip": [
        "{pet}'s microchip number is {code}, as on the pet passport.",
        "The microchip registered for {pet} is {code}.",
    ],
    "chip_q": ["What is {pet}'s microchip number?", "Which pet has the microchip {code}?"],
    "repair": [
        "{who}, the {trade}, fixed the {issue} on {date}.",
        "The {issue} was fixed by {who}, the {trade}, on {date}.",
        "{p} had {who} the {trade} round on {date} for the {issue}.",
    ],
    "repair_p": ["Who sorted out the {desc}?"],
    "repair_when": [
        "When did the {trade} fix the {issue}?",
        "On what date did the {trade} deal with the {issue}?",
    ],
    "invoice": [
        "The invoice from {who} for the {issue} is {code}.",
        "{who}'s invoice {code} covers the {issue}.",
    ],
    "invoice_q": ["What is the invoice number for the {issue}?", "Which job does invoice {code} cover?"],
    "recommend": [
        "Neighbour {nb} recommended {who} as a good {trade}.",
        "{nb} next door swears by {who} and passed on the {trade}'s number.",
    ],
    "quote": [
        "{who} quoted {price} pounds for the {issue}.",
        "The quote from {who} for the {issue} came to {price} pounds.",
    ],
    "quote_m": ["How much did the {trade} that {nb} recommended quote?"],
    "order": [
        "Order {code} from {shop} covers the {item} for {p}.",
        "The {item} for {p} came from {shop} under order number {code}.",
        "{shop} confirmed order {code}: the {item} for {p}.",
    ],
    "order_q": ["What is the order number for {p}'s {item}?", "What was ordered under {code}?"],
    "order_p": ["What was bought for {p} from {shop}?"],
    "policy": [
        "The {policy} policy number is {code}.",
        "{p} renewed the {policy}; the policy number is {code}.",
    ],
    "policy_q": ["What is the {policy} policy number?", "Which policy has the number {code}?"],
    "bill": [
        "The {utility} account number is {code}, for when the supplier calls.",
        "{p} pays the {utility} bill under account {code}.",
    ],
    "bill_q": ["What is the {utility} account number?"],
    "plate": [
        "{p}'s car has the number plate {code}.",
        "The plate on {p}'s car is {code}, needed for the parking permit.",
    ],
    "plate_q": ["What is the number plate of {p}'s car?", "Whose car has the plate {code}?"],
    "trip": [
        "{p} booked a trip to {dest} from {date} to {end}, booking ref {code}.",
        "The family is going to {dest} on {date}, back {end}; the booking reference is {code}.",
    ],
    "trip_cancel": [
        "The trip to {dest} was cancelled because {reason}.",
        "The holiday in {dest} is off because {reason}.",
    ],
    "trip_move": [
        "The trip to {dest} moved to {date} because {reason}.",
        "{p} rebooked {dest} to leave on {date}; everything else stays the same.",
    ],
    "trip_q": ["What is the booking reference for the trip to {dest}?"],
    "trip_when": ["When does the trip to {dest} start?"],
    "trip_now": ["When does the trip to {dest} leave now?", "Is the trip to {dest} still going ahead?"],
    "incident": [
        "{p} {what}, which made for an eventful day.",
        "Poor {p} {what}; everyone is fussing over it.",
        "Big news at home today: {p} {what}.",
    ],
    "span": ["What happened to {p} in the week before the trip to {dest}?"],
    "span_repair": ["What was repaired at home in the week before the trip to {dest}?"],
    "sitter": [
        "{who} babysits for the family on {day} evenings.",
        "{p} booked {who} as the regular {day} babysitter.",
    ],
    "sitter_change": [
        "{who} is taking over the babysitting from {old}.",
        "{old} has stopped babysitting; {who} starts next week.",
    ],
    "sitter_q": ["Who babysits on {day} evenings?"],
    "sitter_now": ["Who is the family's babysitter now?"],
}
SMALL_TALK = [
    "{p} said the weather has been miserable all week.",
    "{p} thanked the assistant for yesterday's reminder.",
    "{p} was tired after a long day and wanted a quick chat.",
    "{p} joked that the house is never tidy for more than an hour.",
    "{p} said good morning and asked how things were going.",
    "{p} mentioned feeling much more relaxed this evening.",
    "{p} laughed about the cat video everyone was sharing.",
    "{p} said the kitchen smelled lovely after the baking.",
    "{p} wondered aloud where the week had gone.",
    "{p} said it was nice to have a quiet Sunday for once.",
    "{p} complained, cheerfully, about the traffic on the ring road.",
    "{p} said the garden looked cheerful with the new bulbs.",
    "{p} asked the assistant to stop playing the same song.",
    "{p} said thanks and signed off for the night.",
]
# Words that carry no content, for the paraphrase check.
STOPWORDS = set(
    """a an the and or but of to in on at for from by with about as is are was were be been being do does did
    has have had what which who whom whose when where why how that this these those it its it's s not no
    yes than then so some any all each every now new dr mr mrs ms one two three after before up out into
    over under just also very still again""".split()
)
