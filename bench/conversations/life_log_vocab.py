"""Words and sentence templates for the life_log generator (bench/conversations/life_log.py).

A pair ``(term, other words)`` holds a thing as a memory names it and as a paraphrase question names it.
"""

# Name and pronoun set (f: she/her, m: he/him, n: they/them).
PEOPLE = """
Amara:f Bruno:m Chiara:f Dmitri:m Esme:f Farid:m Greta:f Hiroshi:m Ines:f Jonah:m Kalani:f Lorenzo:m Mireille:f
Nikhil:m Odette:f Pavel:m Quinn:n Rosalind:f Santiago:m Tamsin:f Umar:m Valentina:f Wendell:m Ximena:f Yusuf:m
Zofia:f Anselm:m Beatrix:f Cormac:m Delphine:f Emeka:m Freya:f Gideon:m Hanna:f Idris:m Juniper:f Kofi:m Leonie:f
Mateo:m Noor:f Osric:m Priya:f Rafferty:m Saoirse:f Tobias:m Ulla:f Viktor:m Wren:n Yara:f Zeke:m Anouk:f Basil:m
Celeste:f Dariusz:m Elodie:f Fionn:m Gulnara:f Henrik:m Ilse:f Jasper:m Keiko:f Luca:m Marisol:f Nils:m Orla:f
Percy:m Rhea:f Stellan:m Talia:f Vidar:m Winona:f Aurelio:m Bettina:f Casimir:m Dagny:f Ezra:n Fenna:f
""".split()

PRONOUNS = {
    "f": {"they": "she", "them": "her", "their": "her", "s": "s"},
    "m": {"they": "he", "them": "him", "their": "his", "s": "s"},
    "n": {"they": "they", "them": "them", "their": "their", "s": ""},
}

PET_NAMES = """Pickle Biscuit Marmalade Kumquat Pretzel Waffles Clementine Noodle Sprocket Tofu Bramble Dumpling
Ziggy Pippin Mochi Custard Rascal Sardine Tinker Fennel Gizmo Nutmeg Paprika Toffee Bilbo Lentil Radish Wombat
Sherbet Crumpet Fudge Pistachio Quokka Turnip Haggis Gnocchi Mango Parsnip""".split()

_CITY_WORDS = """Lisbon Porto Valencia Krakow Tallinn Ljubljana Bergen Ghent Lyon Bologna Seville Edinburgh Galway Vienna
Prague Budapest Riga Vilnius Oslo Aarhus Hamburg Leipzig Zurich Basel Marseille Naples Palermo Athens Thessaloniki
Split Dubrovnik Sofia Bucharest Istanbul Montreal Vancouver Portland Austin Denver Kyoto Osaka Hanoi Seoul Melbourne
Wellington Cape_Town Nairobi Marrakesh Reykjavik Helsinki"""
CITIES = [c.replace("_", " ") for c in _CITY_WORDS.split()]

STREETS = """Alder Lane|Quarry Road|Hatherley Street|Foundry Walk|Mulberry Close|Canal Row|Pelham Avenue|Orchard Rise|
Tanner's Yard|Beacon Hill Road|Whitcombe Street|Larkspur Drive|Saltmarsh Lane|Copperfield Road|Kestrel Way|
Juniper Court|Fallow Street|Ropewalk Terrace|Heron Quay|Linden Grove|Marlowe Place|Thistle Street|Bellfounder Lane|
Ashdown Crescent|Wharf Road|Cobbler's Row|Vine Street|Harebell Close""".replace("\n", "").split("|")

COMPANIES = """Brightwater Analytics|Pelican Freight|Northgate Clinic|Tidewell Energy|Copperleaf Design|Halden & Roe|
Quillstone Press|Marrow Biotech|Lumen Street Bakery|Fernhill Primary School|Corvid Games|Saltbox Architects|
Greyhound Logistics|Orbital Dental|Kindling Coffee Roasters|Ashcombe Insurance|Meridian Ferries|Blue Heron Hotel|
Tessellate Software|Wickham Library|Stonebridge Vets|Foxglove Florists|Ironbark Construction|Glasshouse Studio|
Riverside Hospital|Parcelwise|Nightjar Records|Clearwater Council|Honeycomb Nursery|Gantry Robotics""".replace(
    "\n", ""
).split("|")

ROLES = [
    ("nurse", "job on a hospital ward"),
    ("data analyst", "numbers-crunching position"),
    ("primary school teacher", "teaching post with young children"),
    ("sous chef", "second-in-command kitchen job"),
    ("graphic designer", "visual design role"),
    ("paralegal", "legal assistant position"),
    ("software tester", "quality assurance role in tech"),
    ("physiotherapist", "job treating injuries"),
    ("project manager", "role running projects"),
    ("lab technician", "laboratory job"),
    ("barista", "coffee-making job"),
    ("warehouse supervisor", "job overseeing a depot"),
    ("veterinary assistant", "job helping an animal doctor"),
    ("copy editor", "job correcting manuscripts"),
    ("sales rep", "selling job"),
    ("librarian", "job among the bookshelves"),
    ("architect", "building design job"),
    ("dental hygienist", "job cleaning teeth"),
    ("electrician", "wiring trade job"),
    ("social worker", "casework position"),
]

HOBBIES = [
    ("bouldering", "indoor rock climbing"),
    ("pottery", "working with clay on a wheel"),
    ("salsa dancing", "Latin partner dance"),
    ("life drawing", "sketching live models"),
    ("open-water swimming", "swimming in lakes and the sea"),
    ("bread baking", "making sourdough loaves"),
    ("choir singing", "singing with a group"),
    ("woodworking", "making furniture by hand"),
    ("fencing", "sword sport"),
    ("chess", "the board game with kings and pawns"),
    ("birdwatching", "spotting wild birds"),
    ("kickboxing", "martial art with punches and kicks"),
    ("watercolour painting", "painting with water-based paints"),
    ("rowing", "sculling on the river"),
    ("improv comedy", "unscripted theatre"),
    ("beekeeping", "looking after hives"),
    ("archery", "shooting with a bow"),
    ("knitting", "making jumpers with needles and yarn"),
]

# Where each hobby happens, one per HOBBIES entry in the same order.
VENUE_WORDS = """Crux Hall|Kiln Room|Casa Ritmo|Atelier Nord|Eastgate Lido|Crumb Club|Harmony Loft|Shavings Workshop|
Riposte Club|Knight's Corner|Marsh Hide|Dragon Gym|Wash & Brush Studio|Weir Boat Club|Makeshift Theatre|
Greenbank Apiary|Longbow Field|Purl Parlour""".replace("\n", "").split("|")

ANIMALS = [
    ("beagle puppy", "young hound"),
    ("tabby kitten", "striped baby cat"),
    ("rescue greyhound", "retired racing dog"),
    ("ginger cat", "orange-furred cat"),
    ("dwarf rabbit", "small bunny"),
    ("border collie", "sheepdog"),
    ("cockatiel", "crested parrot"),
    ("corn snake", "pet reptile"),
    ("dachshund", "sausage dog"),
    ("Maine Coon", "very large fluffy cat"),
]

PET_FOLLOWUPS = [
    ("{pet} learned to open the fridge door.", "What trick has {P}'s {animal} learned?"),
    ("{pet} needed three stitches after cutting a paw on glass.", "How did {P}'s {animal} get hurt?"),
    ("{pet} chewed through the charger of {P}'s laptop.", "What did {P}'s {animal} chew up?"),
    ("{pet} won second place at a local pet show.", "What prize did {P}'s {animal} win?"),
    ("{pet} has started sleeping in the laundry basket.", "Where does {P}'s {animal} sleep these days?"),
    (
        "{pet} got lost for a night and was found two streets away.",
        "What happened when {P}'s {animal} went missing?",
    ),
]

ITEMS = [
    ("road bike", "racing bicycle"),
    ("espresso machine", "coffee maker"),
    ("standing desk", "height-adjustable table"),
    ("electric piano", "digital keyboard"),
    ("tent", "camping shelter"),
    ("second-hand camera", "used photography gear"),
    ("air fryer", "countertop cooker"),
    ("sofa bed", "couch that folds out"),
    ("pair of hiking boots", "walking footwear"),
    ("telescope", "stargazing equipment"),
    ("sewing machine", "stitching device"),
    ("e-reader", "digital book device"),
    ("rowing machine", "indoor exercise machine"),
    ("vintage record player", "old turntable"),
    ("drone", "small remote-controlled aircraft"),
    ("cast-iron pan", "heavy skillet"),
]

SHOPS = [
    "Hartley's",
    "Brambles Outdoor",
    "Circuit City Market",
    "the flea market",
    "an online shop",
    "Kettle & Co",
]

OCCASIONS = [
    ("the summer holiday", "summer break"),
    ("the anniversary weekend", "celebration of the relationship"),
    ("the milestone birthday", "big birthday celebration"),
    ("the Christmas break", "winter holidays"),
    ("the long weekend in May", "bank-holiday getaway"),
    ("the family reunion", "gathering of relatives"),
    ("the cousins' weekend", "trip with cousins"),
    ("the honeymoon", "post-wedding trip"),
]

CHANGE_REASONS = [
    "the flights were too expensive",
    "a friend offered a free place to stay",
    "the first place was fully booked",
    "the weather forecast looked awful",
    "a work conference clashed with the dates",
    "the ferry was cancelled",
]

PREFERENCES = [
    (
        "favourite cuisine",
        "food style",
        ["Ethiopian", "Georgian", "Sichuan", "Peruvian", "Lebanese", "Korean"],
    ),
    (
        "favourite band",
        "most loved group",
        ["The Lanterns", "Velvet Harbour", "Moss Choir", "Static Orchard"],
    ),
    ("favourite season", "best time of year", ["late autumn", "early spring", "midsummer", "deep winter"]),
    ("favourite board game", "preferred tabletop game", ["Carcassonne", "Wingspan", "Azul", "Catan"]),
    ("go-to drink", "usual beverage", ["oat flat white", "iced matcha", "ginger beer", "mint tea"]),
    (
        "favourite author",
        "best-loved writer",
        ["Ursula Le Guin", "Kazuo Ishiguro", "Toni Morrison", "Italo Calvino"],
    ),
]

RELATIVES = {
    "f": ["sister", "aunt", "grandmother", "niece"],
    "m": ["brother", "uncle", "grandfather", "nephew"],
}

FAMILY_EVENTS = [
    ("{n} got married in {city}.", "Where did {P}'s {rel} get married?"),
    ("{n} retired after thirty years on the buses.", "What did {P}'s {rel} retire from?"),
    (
        "{n} passed the driving test on the fourth attempt.",
        "How many tries did {P}'s {rel} need for the driving test?",
    ),
    ("{n} is recovering from a hip operation.", "What operation did {P}'s {rel} have?"),
    ("{n} opened a small bakery in {city}.", "What business did {P}'s {rel} open?"),
    ("{n} graduated with a degree in marine biology.", "What did {P}'s {rel} study?"),
]

FRIEND_FACTS = [
    ("{f} moved to {city} for a new start.", "Which city did the friend {P} met {venue} move to?"),
    ("{f} started training as a pilot.", "What is the friend {P} met {venue} training to be?"),
    ("{f} just had twins.", "What big family news did the friend {P} met {venue} have?"),
    ("{f} opened a record shop called {shopname}.", "What shop did the friend {P} met {venue} open?"),
]

MEET_PLACES = [
    "at a wedding in the Cotswolds",
    "at a pub quiz",
    "on the night bus",
    "at a volunteering day at the food bank",
    "at a language exchange",
    "at the dog park",
    "on a yoga retreat",
    "at a friend's barbecue",
    "at the climbing wall",
    "during jury duty",
    "in a board game café",
    "at a ceramics fair",
    "in the queue for a festival",
    "on a sailing course",
]

SHOP_NAMES = ["Groove Cellar", "Side B", "Needle Drop", "The Crate", "Vinyl Attic", "Spindle Records"]

INJURIES = [  # (what happened, the cause, the same thing in other words, a question in other words)
    ("sprained {their} wrist", "falling off a bike", "hurt {their} wrist", "What caused {P}'s wrist injury?"),
    ("broke a toe", "walking into the bed frame", "injure {their} foot", "How did {P} injure {their} foot?"),
    (
        "pulled a hamstring",
        "sprinting for a train",
        "strain a leg muscle",
        "How did {P} strain a leg muscle?",
    ),
    ("caught a nasty flu", "a packed conference", "fall ill", "Where does {P} think the illness came from?"),
    ("chipped a tooth", "biting a frozen chocolate bar", "damage a tooth", "What damaged {P}'s tooth?"),
    (
        "got a concussion",
        "a five-a-side football game",
        "get a head injury",
        "How did {P} get a head injury?",
    ),
]

BANDS = [
    "Paper Kites",
    "Saltwater Saints",
    "Hollow Coves",
    "Aurora Static",
    "The Midnight Ferns",
    "Copper Owls",
]
GIG_VENUES = ["the Roundhouse", "the Corn Exchange", "an outdoor stage by the river", "a tiny basement club"]
BOOKS = [
    "The Salt Path",
    "Piranesi",
    "A Gentleman in Moscow",
    "The Overstory",
    "Station Eleven",
    "Klara and the Sun",
    "The Remains of the Day",
    "Pachinko",
    "Circe",
    "The Dispossessed",
]
OPINIONS = [
    ("gripping", "hard to put down"),
    ("slow", "dragging"),
    ("moving", "emotional"),
    ("confusing", "hard to follow"),
]

# Small talk a memory system extracts too: about the same people, never the answer to a question.
FILLERS = [
    "{P} felt drained after a long week and spent Sunday on the sofa.",
    "{P} and {F} joked about how much coffee {P} drinks.",
    "{P} has been watching a lot of baking shows lately.",
    "{P} mentioned the weather has been grey for days.",
    "{P} is thinking about learning a new language but has not decided which.",
    "{P} said work has been busy but fine.",
    "{P} sent {F} a photo of a sunset from {their} balcony.",
    "{P} is trying to cut down on screen time in the evenings.",
    "{P} asked {F} for a good podcast recommendation.",
    "{P} cleaned out the spare room over the weekend.",
    "{P} finds Monday mornings the hardest part of the week.",
    "{P} has been sleeping badly because of noisy neighbours.",
    "{P} told {F} about a funny misunderstanding at the supermarket.",
    "{P} is saving up money for something but would not say what.",
]

TRIP_PURPOSES = [
    ("a friend's wedding", "a marriage ceremony"),
    ("a job interview", "a meeting with a possible employer"),
    ("a food festival", "an event about eating"),
    ("a week of hiking", "a walking holiday"),
    ("a conference on urban planning", "a professional gathering"),
    ("a grandparent's ninetieth birthday", "an elderly relative's celebration"),
    ("a stag weekend", "a groom's party"),
    ("a photography workshop", "a course on taking pictures"),
    ("a surfing course", "lessons riding waves"),
    ("a reunion with university friends", "a get-together with old classmates"),
]

AIRLINES = ["TP", "FR", "LH", "KL", "AY", "SK", "BA", "IB", "OS", "LX", "EI", "U2"]

# Sentence shapes of the observations, by event; {when}/{When} is the event's day as the session told it.
SHAPES = {
    "job": [
        "{P} started working as {a_role} at {co} {when}.",
        "{When}, {P} began a new job as {a_role} at {co}.",
        "{P} told {F} that {co} hired {them} as {a_role}; the first day was {when}.",
    ],
    "job change": ["After leaving {prev}, {P} joined {co} as {a_role} {when}."],
    "move": [
        "{P} moved into a flat at {addr}, {city}, {when}.",
        "{When}, {P} got the keys to a new place at {addr} in {city}.",
        "{P} is finally settled in {city}; the new address is {addr}, moved in {when}.",
        "{P} complained to {F} that the move to {addr} in {city} {when} took fourteen hours.",
    ],
    "trip": [
        "{P} flew to {city} on flight {code} {when} for {purpose}.",
        "{When}, {P} took flight {code} to {city} for {purpose}.",
        "{P} is back from {city}, where {P} went for {purpose}; the outbound flight {code} left {when}.",
        "{P} showed {F} photos from {city}, where {P} went for {purpose} {when}.",
    ],
    "hobby dated": [
        "{P} signed up for {hobby} classes at {venue} {when}.",
        "{When}, {P} tried {hobby} for the first time at {venue} and loved it.",
    ],
    "hobby": [
        "{P} has got really into {hobby} and goes to {venue} every week.",
        "{P} invited {F} to a {hobby} session at {venue}, the place {P} goes every Thursday.",
    ],
    "pet": [
        "{P} adopted a {animal} named {pet} {when}.",
        "{When}, {P} brought home {pet}, a {animal} from the rescue centre.",
        "{P} has a new {animal} called {pet}, adopted {when}, and sent {F} about twenty photos.",
    ],
    "purchase": [
        "{P} ordered {a_item} from {shop} {when}; the order number is {code}.",
        "{P} bought {a_item} for {price} {when}.",
        "{P} is still waiting for order {code}, {a_item} from {shop} placed {when}.",
        "{When}, {P} treated {self} to {a_item} that cost {price}.",
    ],
    "plan": [
        "{P} is planning to spend {occ} in {first}.",
        "{P} booked a cottage near {first} for {occ}.",
        "{P} told {F} that {occ} will be in {first} this year.",
    ],
    "plan change": [
        "{P} changed the plan for {occ}: {second} instead of {first}, because {reason}.",
        "{P} cancelled {first} for {occ} since {reason}; {second} is the new plan.",
        "{Occ} is now going to be in {second}, {P} said, after learning that {reason}.",
    ],
    "preference": [
        "{P}'s {cat} is {value}.",
        "{P} confessed that {value} is {their} {cat}.",
        "{P} says {their} {cat} is {value}.",
    ],
    "preference change": [
        "{P} has a new {cat}: {new}, replacing {old}.",
        "{P} said {old} is no longer {their} {cat}; it is {new} now.",
    ],
    "meet dated": [
        "{P} met {f} {place} {when}.",
        "{When}, {P} got chatting with {f} {place}, and they swapped numbers.",
    ],
    "meet": ["{P} mentioned a new friend, {f}, whom {P} met {place}."],
    "relative": [
        "{P}'s {rel} is called {n} and lives in {city}.",
        "{P} mentioned {their} {rel}, {n}, who lives in {city}.",
    ],
    "injury": [
        "{P} {past} {when} after {cause}.",
        "{When}, {P} {past}; {cause} was to blame.",
        "{P} is taking it easy: {they} {past} from {cause} {when}.",
    ],
    "gig": [
        "{P} saw {band} live at {venue} {when}.",
        "{When}, {P} and {F} went to the {band} gig at {venue}.",
        "{P} got tickets for {band} at {venue}; the show was {when} and the sound was terrible.",
    ],
    "race": [
        "{P} ran the {city} {distance} {when} in {time}.",
        "{When}, {P} finished the {city} {distance} in {time}.",
    ],
    "book": [
        "{P} finished reading '{title}' and found it {opinion}.",
        "{P} recommended '{title}' to {F}, calling it {opinion}.",
    ],
}
