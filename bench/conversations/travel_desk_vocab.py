"""Invented vocabularies for the travel_desk conversational set (see bench/conversations/travel_desk.py).

Every name here is made up for the set: people, destinations, hotels, airlines, tour operators, car hire firms
and loyalty schemes. Real nationalities and month names are the only borrowed words.
"""

BRANCHES = [
    "harbourside",
    "old-town",
    "riverside",
    "station-road",
    "market-square",
    "hillcrest",
    "northgate",
    "lakeview",
    "westbridge",
    "the-arcade",
    "castle-street",
    "seafront",
]

FIRST_NAMES = (
    "Priya Arjun Mei Tomasz Ingrid Kofi Lucia Rafael Hana Oskar Amara Dmitri Sofia Jonah Leila Mateo Yusuf Elin "
    "Carmen Niall Ayesha Bruno Freya Tariq Nadia Pavel Greta Idris Rosa Kenji Maren Emeka Clara Santiago Anouk "
    "Farid Hilde Marco Zainab Lukas Beatrix Omar Signe Diego Keiko Anders Fatima Stellan Iris Cormac Yara "
    "Henrik Chiara Babajide Ottilie Ravi Marisol Tobias Suki Ewan Lena Hamza Pilar Viktor Agnes Kwame Nora "
    "Ilse Matteo Aoife Jomo Teodora Sven Rukmini Felipe Astrid Baxter Dalia Emil Fiona Gustavo Helga Imran "
    "Juno Kasimir Liesel Malik Nell Orla Pieter Quinn Rhiannon Saul Thea Ulrich Vesna Wendell Xenia Yannick "
    "Zora Alba Bodhi Cyrus Delphine Esra Florin Gideon Halima Ines Jasper Kalinda Leopold Mirela Nikolai "
    "Odette Perrin Rosalind Soren Tamsin Umar Valentina Wilhelmina Ximena Yevgenia Zeno Anika Benedikt "
    "Cosima Dashiell Eamon Faye Gaspard Honora Ivo Jovana Kiran Linnea Mireille Nadir Ottavia Pascal Rhea"
).split()

SURNAMES = (
    "Shah Okafor Lindqvist Moreau Brandt Castellano Nakamura Oyelaran Petrov Quinlan Rasmussen Szabo Tanaka "
    "Varga Whitcombe Abara Bergstrom Calloway Dervish Esposito Fairweather Galloway Holloway Ibarra Jankowski "
    "Kowalczyk Larkspur Mbeki Novak Ostrander Pemberton Quayle Rourke Salazar Thorne Underhill Vasquez Wren"
).split()

RELATIONS = [
    "husband",
    "wife",
    "partner",
    "son",
    "daughter",
    "mother",
    "father",
    "sister",
    "brother",
    "friend",
    "colleague",
    "business partner",
]

DESTINATIONS = [
    "Port Aldera",
    "Kellhaven",
    "Marisco Bay",
    "Vell Harbour",
    "San Orvino",
    "Lake Tessary",
    "Brimholt",
    "Casavera",
    "Nordvik Fjord",
    "Isla Quenta",
    "Montbrac",
    "Saltreach",
    "Dunmarrow",
    "Corvella",
    "Val Serein",
    "Ostrava Sands",
    "Telmouth",
    "Ambergate Isles",
    "Riva Calda",
    "Thornwick",
    "Palmera Cove",
    "Goldhollow",
    "Santa Lirio",
    "Eskerholm",
]

HOTELS = [
    "Hotel Saltmarsh",
    "The Juniper Lodge",
    "Casa Albarin",
    "The Gullwing Inn",
    "Hotel Miraluz",
    "The Copper Kettle Guesthouse",
    "Villa Serafina",
    "The Lantern Rooms",
    "Hotel Brisamar",
    "The Foxglove House",
    "Palazzo Verdigris",
    "The Driftwood Suites",
    "Hotel Corallo",
    "The Quarry Hall",
    "Pension Edelweiss Blau",
    "The Tidewater",
    "Hotel Solenne",
    "The Bramble Court",
]

AIRLINES = [
    ("Corvid Air", "CV"),
    ("Bluewake Airways", "BW"),
    ("Skylark Regional", "SK"),
    ("Meridian Jet", "MJ"),
    ("Aurora Atlantic", "AA"),
    ("Kestrel Air", "KE"),
]

LOYALTY_SCHEMES = [
    "Corvid Miles",
    "Bluewake Club",
    "Skylark Circle",
    "Meridian Plus",
    "Aurora Gold",
    "Kestrel Flyer",
    "Lantern Stays",
    "Hearth Hotels Select",
]

TOURS = [
    "sunset kayak tour",
    "old-quarter walking tour",
    "vineyard tasting day",
    "glacier hike",
    "whale-watching cruise",
    "cooking workshop",
    "lighthouse boat trip",
    "street-food evening",
    "cave swim excursion",
    "hot-air balloon flight",
]

CAR_HIRE = ["Roadrunner Rentals", "Pebble Car Hire", "Vantage Motors Hire", "Cobalt Drive", "Wayfarer Wheels"]

CAR_TYPES = [
    "a compact hatchback",
    "an estate car",
    "a seven-seater",
    "an automatic saloon",
    "a small convertible",
]

COMPANIES = [
    "Halden Logistics",
    "Brightwater Clinic",
    "Ferncastle School",
    "Orrin Analytics",
    "Tallis & Moor",
]

TOWNS = ["Ashcombe", "Millbrook", "Steyning Cross", "Orwell Park", "Kingsmere", "Fallowfield"]

NATIONALITIES = [  # with their article
    "an Irish",
    "a Canadian",
    "an Indian",
    "a Nigerian",
    "a Polish",
    "a Swedish",
    "a Brazilian",
    "a Japanese",
    "a Kenyan",
    "a Portuguese",
    "a New Zealand",
    "a Dutch",
]

SEATS = ["an aisle seat", "a window seat", "an exit-row seat", "a seat near the front", "a bulkhead seat"]

DIETS = ["vegetarian", "vegan", "gluten-free", "halal", "kosher", "pescatarian", "dairy-free", "low-sodium"]

MOBILITY = [
    "needs wheelchair assistance at airports",
    "cannot manage steep stairs",
    "walks with a cane",
    "needs a ground-floor room",
    "requires step-free access",
    "uses a mobility scooter",
]

BUDGETS = [
    "around 1,500 euros per person",
    "under 900 euros for the week",
    "up to 3,000 euros in total",
    "roughly 2,200 euros for two",
    "no more than 600 euros",
    "about 4,000 euros for the family",
]

HOTEL_TASTES = [
    "small boutique places",
    "quiet rooms far from the lift",
    "places with a heated pool",
    "rooms facing the sea",
    "family-run guesthouses",
    "big resorts with a kids' club",
    "anywhere with a proper gym",
]

FEARS = ["flying", "heights", "small boats", "tunnels", "crowds", "deep water", "turbulence", "dogs"]

HOBBIES = [
    "birdwatching",
    "scuba diving",
    "wine tasting",
    "hiking",
    "photography",
    "golf",
    "painting",
    "cycling",
    "chess",
]

AMOUNTS = [380, 420, 560, 640, 785, 890, 960, 1120, 1340, 1475, 1690, 1850, 2100, 2380, 2760, 3150]

CANCEL_REASONS = [
    "a family emergency",
    "work got in the way",
    "the visa did not arrive in time",
    "a doctor advised against travel",
    "the group fell apart",
]

SWAP_REASONS = ["a noisy renovation next door", "a better sea view", "a cheaper rate", "step-free rooms"]

COMPLAINT_ISSUES = [
    "the room was not cleaned for three days",
    "the airport transfer never showed up",
    "the pool was closed the whole stay",
    "the booked sea view turned out to face a car park",
    "the breakfast ignored the dietary request",
    "the tour guide left forty minutes late",
]

CHATTER_TOPICS = [
    "the rain in {town} all week",
    "a new sourdough starter",
    "the local football team losing again",
    "a neighbour's noisy extension",
    "a podcast about lighthouses",
    "a crossword that took all evening",
    "a cat that keeps stealing socks",
    "roadworks outside the office in {town}",
    "a garden full of snails",
    "a karaoke night that went too long",
    "a broken kettle at home",
    "an unexpectedly good pub quiz",
]
