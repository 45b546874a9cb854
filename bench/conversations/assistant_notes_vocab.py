"""Word lists for bench/conversations/assistant_notes.py: people, places, things a personal assistant hears about."""

# Data tables, kept compact.
# fmt: off


# (first name, pronoun) of the users an assistant agent serves.
USERS = [("Priya", "she"), ("Tomasz", "he"), ("Amara", "she"), ("Joaquin", "he"), ("Ingrid", "she"),
         ("Kwame", "he"), ("Mei", "she"), ("Rafael", "he"), ("Siobhan", "she"), ("Dmitri", "he"),
         ("Leilani", "she"), ("Hamza", "he"), ("Beatriz", "she"), ("Oskar", "he"), ("Nadia", "she"),
         ("Callum", "he"), ("Yuki", "she"), ("Emeka", "he"), ("Rosalind", "she"), ("Arjun", "he"),
         ("Fatima", "she"), ("Lukas", "he"), ("Chiara", "she"), ("Darnell", "he"), ("Svetlana", "she"),
         ("Mateo", "he"), ("Aoife", "she"), ("Gideon", "he"), ("Marisol", "she"), ("Henrik", "he"),
         ("Zanele", "she"), ("Bruno", "he"), ("Ewa", "she"), ("Farid", "he"), ("Hanna", "she"),
         ("Ravi", "he")]
PRONOUNS = {"she": ("she", "her", "her"), "he": ("he", "him", "his")}

# Relatives, friends, colleagues: never a user's name, unique within an agent.
PEOPLE = """Meera Lena Tobias Greta Santiago Ayesha Colm Ines Viktor Noor Felix Odile Bashir Clara Dev Harriet Ilya Jun
Kasia Lorenzo Maud Nikhil Orla Pablo Quinn Rania Stellan Tamsin Umar Vera Wendell Ximena Yusuf Zora Anselm Bridget
Cyrus Delphine Esme Florin Gwen Hector Isolde Jasper Katya Lionel Magda Nils Olu Petra Reuben Sabine Teodor Ulla
Valentin Wren Yara Zeke Agnes Basil Cosima Dario Elif Fergus Gianna Hiro Ida Jovan Kirsi Leopold Mina Neville
Ottilie Piet Rosa Soren Thea Uriel Viola Wim Xavi Ysolde""".split()
SURNAMES = """Okafor Lindqvist Haddad Moreau Kowalczyk Abernathy Tanaka Ferreira Oyelaran Brandt Castellano Novak
Whitcombe Rahman Delacroix Petrov Gallagher Ishikawa Mbeki Sorensen Vance Alvarado Kaur Holloway Strand Quispe""".split()
CITIES = """Lisbon Ghent Porto Valencia Bologna Krakow Tallinn Edinburgh Lyon Bergen Seville Ljubljana Galway Utrecht
Trieste Bilbao Dresden Malmo Nantes Cork Graz Bordeaux Thessaloniki Aarhus Leeds Antwerp Basel Turku Split Cadiz""".split()
RELATIONS = ["sister", "brother", "mother", "father", "son", "daughter", "partner", "niece", "nephew",
             "grandmother", "cousin", "aunt", "godson", "father-in-law", "mother-in-law"]
GIFTS = ["a watercolour set", "a cast-iron pan", "noise-cancelling headphones", "a pottery class voucher",
         "a vintage atlas", "a leather journal", "a telescope", "climbing shoes", "a bread-making kit",
         "a board game", "a silk scarf", "a drone", "a plant subscription", "a record player",
         "a fountain pen", "hiking poles"]
HOBBIES = [("taken up bouldering", "climbing"), ("started salsa lessons", "dancing"),
           ("joined a choir", "singing"), ("begun learning the cello", "music"),
           ("started a sourdough habit", "baking"), ("signed up for a pottery course", "ceramics"),
           ("joined a chess club", "board games"), ("started sea swimming", "open-water swimming"),
           ("taken up birdwatching", "birds"), ("begun restoring an old bicycle", "bike repair")]

RESTAURANTS = """Osteria Lupa|Casa Brava|The Gilded Fig|Saffron House|Nori Bar|Le Petit Cormoran|Trattoria Sole|
The Copper Kettle|Maison Verte|El Faro|Blue Lantern|Pho Minh|Ember & Ash|The Salt Loft|Olive Grove Taverna|
Kin Khao|Mercado Nueve|The Hazel Room|Bistro Margaux|Dumpling Yard|Rosemary Lane|Tandoor Junction|
La Cantina Roja|Juniper Table|Fennel & Rye|The Brass Duck|Kamome|Ristorante Vesuvio""".replace(
    "\n", ""
).split("|")
SHOPS = ["Hollis & Co", "Brightmart", "Northfield Home", "Parcelo", "Kestrel Outdoors", "Lumen Electronics",
         "Page & Quill", "Ferro Kitchenware", "Woolhouse", "Tidewater Sports", "Cobalt Tech",
         "Greenleaf Garden"]
ITEMS = ["a standing desk", "a pair of trail running shoes", "a 27-inch monitor", "an espresso machine",
         "a child car seat", "a wool winter coat", "a robot vacuum", "a set of ceramic bowls",
         "a road bike helmet", "a mechanical keyboard", "a garden bench", "an e-reader", "a tent for four",
         "a blender", "a desk lamp", "blackout curtains", "a weighted blanket", "a carry-on suitcase"]
DELAY_REASONS = ["a warehouse backlog", "a courier strike", "a missing part", "a customs hold",
                 "a stock error"]

# (kind, what it treats or involves, provider title)
APPOINTMENTS = [("dentist", "a check-up of the teeth", "Dr."), ("GP", "a general health check", "Dr."),
                ("physiotherapy", "treatment for a sore knee", ""), ("optician", "an eye test", ""),
                ("haircut", "a trim", ""), ("car service", "the yearly inspection of the car", ""),
                ("accountant", "going over the tax return", ""), ("dermatology", "a skin check", "Dr."),
                ("vet", "the pet's vaccinations", "Dr."),
                ("parent-teacher", "a meeting about school progress", "")]
RESCHEDULE_REASONS = ["a clash with a work offsite", "a sick child", "a train strike", "a delayed flight",
                      "the clinic cancelling", "a client workshop", "a family visit", "a car breakdown"]
DINNER_REASONS = ["a sick child", "a train strike", "a late client call", "a family visit", "a babysitter cancelling"]

PROJECTS = """Beacon Atlas Juniper Harbor Quartz Meridian Tundra Lantern Falcon Cobalt Orchid Pioneer Saffron
Granite Nimbus Compass Kelp Aurora Basalt Willow""".split()
PROJECT_KINDS = ["migration", "launch", "redesign", "audit", "rollout", "pilot", "integration", "roadmap"]
TEAMS = ["design", "legal", "finance", "data", "security", "support", "marketing", "platform"]

AIRLINES = ["TP", "IB", "KL", "LH", "SK", "AY", "EI", "VY", "LX", "OS"]
HOTEL_WORDS = ["Hotel Miramar", "The Linden", "Casa do Rio", "Hotel Astoria", "The Wharf Inn",
               "Pension Aurora", "Hotel Kronen", "The Old Mill", "Hostal Luna", "Grand Hotel Esplanade",
               "The Signal House"]
SIGHTS = ["the old lighthouse", "the botanical garden", "a food market", "the cathedral roof walk",
          "the modern art museum", "a wine cellar tour", "the coastal cliff path", "the night market",
          "a jazz club", "the castle ruins", "the tram museum", "the city's oldest bookshop"]

# (routine, a paraphrase of the activity for questions)
ROUTINES = [("swims at the leisure centre", "pool sessions"), ("runs 5 km", "jogs"),
            ("does a yoga class", "stretching on the mat"), ("lifts weights at the gym", "strength training"),
            ("cycles to work", "commuting by bike"), ("walks 10,000 steps", "long walks"),
            ("does a pilates session", "core exercise classes")]
WEEKDAYS = ["Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays"]
SUPPLEMENTS = ["vitamin D", "iron tablets", "magnesium", "omega-3 capsules", "a B12 supplement"]
INJURIES = [("twisted an ankle", "playing five-a-side"), ("pulled a hamstring", "sprinting for a bus"),
            ("strained a wrist", "moving furniture"), ("hurt a shoulder", "at a climbing wall"),
            ("cut a finger", "slicing bread")]

# (diet as the memory says it, a paraphrase for the question)
DIETS = [("is vegetarian and never eats meat or fish", "Which foods must be left off meal plans for {n}?"),
         ("is vegan", "Does {n} eat any animal products at all?"),
         ("is lactose intolerant, so avoids milk and soft cheese", "Why does {n} steer clear of dairy?"),
         ("has coeliac disease and has to eat gluten-free", "Why can't {n} have ordinary bread or pasta?"),
         ("is pescatarian: fish yes, meat no", "Which kind of animal protein does {n} still eat?"),
         ("keeps halal", "What dietary rule should restaurants know about for {n}?"),
         ("is allergic to peanuts and carries an EpiPen", "What food allergy does {n} have?"),
         ("follows a low-FODMAP diet on the dietitian's advice", "What eating plan did a dietitian give {n}?")]
DISLIKES = ["coriander", "olives", "mushrooms", "blue cheese", "aubergine", "anchovies", "raw onion",
            "beetroot"]

# (tool, what for, a paraphrase of the use)
TOOLS = [("Todoist", "to-do lists", "keep track of tasks"), ("Obsidian", "notes", "write things down"),
         ("Google Calendar", "scheduling", "plan the diary"), ("YNAB", "budgeting", "track spending"),
         ("Notion", "project docs", "keep project plans"), ("Strava", "logging workouts", "record exercise"),
         ("Anki", "flashcards", "memorise vocabulary"), ("Trello", "household chores", "split up housework"),
         ("Outlook", "work email", "read mail from the office"),
         ("Signal", "family chat", "message relatives")]
TIME_PREFS = ["prefers meetings before 11am", "keeps Friday afternoons free of calls",
              "wants reminders the evening before, not the same morning",
              "likes replies as short bullet points",
              "would rather get a phone call than a text for anything urgent",
              "wants summaries in plain prose"]

REMINDERS = [("renew the passport", "a new travel document"),
             ("book the boiler service", "the heating check"), ("pay the council tax", "a local tax bill"),
             ("submit the expense report", "claiming work costs"),
             ("call the bank about the mortgage", "the home loan"),
             ("return the library books", "borrowed books"),
             ("send the rent to the landlord", "paying for the flat"),
             ("water the neighbour's plants", "greenery"), ("order contact lenses", "eye supplies"),
             ("cancel the streaming trial", "a free subscription")]
PET_KINDS = ["dog", "cat", "rabbit", "parrot", "tortoise"]
PET_NAMES = """Biscuit Mochi Pickle Waffles Ziggy Noodle Rocket Tofu Marmalade Pudding Sprocket Bramble
Gizmo Nutmeg Pixel Sherbet Crumpet Kiwi Bagel Socks Fudge Clementine Pretzel Truffle""".split()
STREETS = ["Larkspur Lane", "Quarry Road", "Wexford Street", "Alder Close", "Harbour Row", "Cedar Avenue",
           "Mill Lane", "Foundry Street", "Orchard Way", "Kingfisher Drive", "Tannery Yard", "Sorrel Gardens"]
BANDS = ["The Paper Kites", "Nordic Echo", "Lila Vance Trio", "Brass Cartel", "The Lowland Hum",
         "Midnight Ferry", "Aurelia Quartet", "Dust & Velvet"]
VENUES = ["the Corn Exchange", "the Roundhouse", "the Philharmonie", "the Waterfront Hall",
          "the Old Fire Station"]
POLICIES = [("car insurance", "the car"), ("home contents insurance", "belongings in the flat"),
            ("travel insurance", "trips abroad"), ("pet insurance", "the pet's vet bills")]

# Observations with no question: the noise of a long assistant relationship.
FILLER = ["{n} asked for a recap of the week's calendar.",
          "The user said the week had been hectic with school runs.",
          "{n} mentioned the weather in {city} had been grey for days.",
          "{n} asked the assistant to draft a polite decline to a conference invitation.",
          "The user wanted a packing list for a weekend away.",
          "{n} said {pos} laptop battery drains too quickly and asked about replacements.",
          "{n} asked for three quick dinner ideas using leftover rice.",
          "The user said {sub} slept badly and wanted a lighter day.",
          "{n} asked for a summary of an article about sleep and caffeine.",
          "{n} said the {proj} meeting ran over again.",
          "{n} asked the assistant to compare two phone contracts.",
          "The user asked how long to boil an egg for a runny yolk.",
          "{n} said {sub} was thinking about repainting the hallway.",
          "{n} asked for a gentle reminder message to send to a late-paying client.",
          "{n} mentioned {pos} neighbour's building work starts at 7am.",
          "The user said {sub} finally cleared the inbox.",
          "{n} asked for birthday card wording for a colleague.",
          "{n} wondered whether to switch energy supplier.",
          "{n} said {pos} train into {city} was cancelled twice this week.",
          "The user asked for a stretching routine for long desk days.",
          "{n} asked which plants survive a north-facing balcony.", "The user asked for a polite way to leave a group chat.",
          "{n} said {sub} is trying to drink less coffee after 2pm.", "{n} asked for a playlist for a long drive to {city}.",
          "{n} wanted help wording a complaint about a noisy hotel room.", "{n} said the {proj} standup moved to 9:15.",
          "{n} asked how to descale a kettle.", "The user asked for a five-minute breathing exercise before a presentation.",
          "{n} said {pos} sister-in-law recommended a podcast about history.", "{n} asked for a checklist for a home move.",
          "{n} said {sub} had forgotten an umbrella again in {city}.", "{n} asked which museums in {city} open on Mondays.",
          "The user wanted a reply to a recruiter that keeps the door open.", "{n} said the {proj} retro was surprisingly useful.",
          "{n} asked for a gift idea under 30 euros for a neighbour.", "{n} said {pos} phone screen cracked on the way to work."]

# Memory templates, filled per user: {n} name, {ref} name or "The user", {sub}/{obj}/{pos} pronouns.
BIRTHDAY = ["{n}'s {rel} {r} has a birthday on {when}.", "{r}, {n}'s {rel}, turns {age} on {when}.",
            "{n} said {pos} {rel} {r} celebrates a birthday on {when}."]
LIVES_IN = ["{r} moved to {city} last spring for a new job.", "{r} lives in {city} these days."]
GIFT = ["{n} is thinking of getting {r} {gift} as a present.", "{n} wants to surprise {r} with {gift}."]
DISLIKE = ["{n} can't stand {dislike} and wants recipes without them.",
           "The user said no {dislike} in any recipe, ever."]
TABLE = ["{ref} booked a table for {k} at {rest} on {when} at {t}; confirmation code {code}.",
         "{rest} confirmed {n}'s reservation {code}: {k} people, {when}, {t}.",
         "{n} has dinner booked at {rest} for {when} at {t}, party of {k}, reference {code}."]
TABLE_MOVED = ["{n} pushed the {rest} dinner to {when} because of {reason}.",
               "Because of {reason}, the {rest} dinner moved to {when}."]
ORDER = ["{ref} ordered {item} from {shop}, order number {code}, due on {when}.",
         "{n}'s order {code} from {shop} is {item}; delivery expected {when}.",
         "{n} bought {item} online at {shop} (order {code}); it should arrive by {when}."]
ORDER_LATE = ["{n} heard the {thing} from {shop} is held up by {reason}; new date {when}.",
              "{shop} told {n} the {thing} slipped to {when} due to {reason}."]
APPOINTMENT = ["{ref} has {akind} appointment with {prov} on {when} at {t}.",
               "{n} booked {prov} for {akind} appointment, {when} at {t}."]
APPOINTMENT_MOVED = ["{n} moved the {kind} appointment to {when} at {t} because of {reason}.",
                     "Owing to {reason}, {n}'s {kind} appointment is now {when}, {t}."]
APPOINTMENT_AGAIN = ["The {kind} appointment changed again: {n} now goes on {when}.",
                     "{n} had to shift the {kind} visit once more, to {when}."]
LEAD = ["{n}'s manager {boss} asked {obj} to lead the {proj}, due {when}.",
        "{boss}, who manages {n}, put {obj} in charge of the {proj} (deadline {when})."]
REVIEW = ["{n} said {rev} from {team} is reviewing the {proj}.",
          "{rev} in {team} has been asked to review {n}'s {proj}."]
RELOCATE = ["{boss} is relocating to the {city} office in {month}.",
            "{boss} will work from {city} from {month} onwards."]
SLIP = ["The {proj} deadline slipped from {old} to {when}.",
        "{n} said the {proj} is now due {when} instead of {old}."]
LEAVE = ["{rev} goes on parental leave from {when}.", "{rev} starts a sabbatical on {when}."]
FLIGHT = ["{ref} is flying to {city} on {when} on {flight}, leaving at {t}.",
          "{n}'s flight {flight} to {city} departs {when} at {t}."]
HOTEL = ["{n} booked {k} nights at {hotel} in {city}, confirmation {conf}.",
         "{hotel} in {city} holds {k} nights for {n} under confirmation {conf}."]
SIGHT = ["{n} wants to see {sight} while in {city}.", "{n} asked for tips on visiting {sight} in {city}."]
REBOOKED = ["{n}'s {city} flight was cancelled; rebooked on {flight} on {when}.",
            "The airline moved {n} to {flight} on {when} for the {city} trip."]
ROUTINE = ["{ref} {act} on {d1} and {d2}.", "{n} {act} every week on {d1} and {d2}."]
ROUTINE_SWAP = ["{n} swapped {d1} for {d3} in the weekly routine.",
                "From now on {n} keeps {d3} instead of {d1} for exercise."]
SUPPLEMENT = ["{n} takes {supp} every morning.", "The user started taking {supp} daily."]
INJURY = ["On {when} {n} said {sub} had {injury} {cause}.",
          "{n} {injury} {cause}, as {sub} mentioned on {when}."]
REMINDER = ["{n} asked to be reminded to {task} on {when}.", "The user wants a nudge on {when} to {task}."]
TOOL = ["{n} uses {tool} for {use}.", "The user relies on {tool} for {use}."]
PET = ["{n} has a {kind} called {pet}.", "{pet} is {n}'s {kind}."]
ADDRESS = ["{n}'s new address is {addr}.", "{n} has moved house; deliveries now go to {addr}."]
FRIEND = ["{n} said {pos} friend {friend} has {hobby}.",
          "{n}'s friend {friend} has {hobby}, {sub} mentioned."]
FRIEND_MOVES = ["{friend} is moving to {city} after the summer.", "{friend} has found a flat in {city}."]
CONCERT = ["{n} bought tickets for {band} at {venue} on {when}, seats {seats}.",
           "{n} is seeing {band} at {venue} on {when}; seats {seats}."]
POLICY = ["{n}'s {policy}, policy {code}, renews on {when}.",
          "Policy {code} is {n}'s {policy}; renewal due {when}."]
PAST = ["{n} had dinner at {rest} on {when} and found it too loud.",
        "{n} had {akind} appointment on {when}; nothing to follow up.",
        "{n}'s parcel from {shop} arrived on {when} in good shape.",
        "{n} spent the weekend of {when} in {city}.",
        "{n} tried {rest} on {when} and loved the desserts.",
        "{n} returned a parcel to {shop} on {when}; the refund came through."]
