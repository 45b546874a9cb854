"""Word lists for the vet_clinic conversational memory set (bench/conversations/vet_clinic.py)."""

OWNERS = [
    "Sarah", "Tom", "Priya", "Gareth", "Helen", "Marcus", "Aisha", "Dylan", "Fiona", "Kwame",
    "Rachel", "Owen", "Lucy", "Hamid", "Jenny", "Callum", "Nadia", "Stuart", "Bethan", "Ravi",
    "Moira", "Connor", "Zara", "Ian", "Sophie", "Declan", "Anita", "Graham", "Leah", "Tariq",
    "Carol", "Ewan", "Megan", "Samir", "Yvonne", "Angus", "Chloe", "Patrick", "Imogen", "Viktor",
]  # fmt: skip

HOUSEHOLD_NAMES = [
    "Jake", "Mia", "Dan", "Ellie", "Noah", "Grace", "Ben", "Ruby", "Sam", "Freya", "Joe", "Alfie",
    "Maisie", "Harvey", "Isla", "Kieran", "Lola", "Reece", "Tilly", "Arjun", "Nina", "Ollie", "Cerys",
    "Finn", "Jade", "Luca", "Hattie", "Rory", "Amber", "Elliot",
]  # fmt: skip

RELATIONS = {
    "f": ["partner", "wife", "daughter", "mum", "flatmate", "neighbour", "dog walker", "sister", "niece", "lodger"],
    "m": ["partner", "husband", "son", "dad", "flatmate", "neighbour", "dog walker", "brother", "nephew", "lodger"],
}  # fmt: skip
FEMALE_HOUSEHOLD = {"Mia", "Ellie", "Grace", "Ruby", "Freya", "Maisie", "Isla", "Lola", "Tilly", "Nina", "Cerys",
                    "Jade", "Hattie", "Amber"}  # fmt: skip

PET_NAMES = [
    "Biscuit", "Luna", "Rex", "Bella", "Belle", "Milo", "Millie", "Max", "Maxi", "Poppy", "Pip",
    "Pippin", "Ziggy", "Ziggy", "Nala", "Coco", "Cocoa", "Teddy", "Ted", "Willow", "Winnie", "Alfie",
    "Archie", "Bonnie", "Bonny", "Marmite", "Pickle", "Peanut", "Pepper", "Smudge", "Sooty", "Tigger",
    "Oscar", "Olive", "Ollie", "Rosie", "Ruby", "Bear", "Buster", "Bramble", "Hazel", "Juniper", "Dotty",
    "Mabel", "Murphy", "Nutmeg", "Fudge", "Toffee", "Crumble", "Maple", "Basil", "Sage", "Ginger",
    "Shadow", "Storm", "Bluebell", "Clover", "Dexter", "Frankie", "Gizmo", "Hugo", "Lottie", "Monty",
]  # fmt: skip

# species -> breeds. Species words never appear in notes other than the registration note.
BREEDS = {
    "dog": [
        "cocker spaniel", "labrador", "border collie", "cockapoo", "dachshund", "Staffordshire bull terrier",
        "golden retriever", "Jack Russell", "French bulldog", "beagle", "whippet", "springer spaniel",
    ],
    "cat": [
        "domestic shorthair", "Maine Coon", "ragdoll", "British shorthair", "Siamese", "Bengal",
        "domestic longhair", "Burmese",
    ],
    "rabbit": ["Netherland dwarf", "lionhead", "mini lop", "English lop", "Dutch"],
    "guinea pig": ["Abyssinian", "Peruvian", "American crested", "Teddy-coated"],
}  # fmt: skip
SPECIES_WEIGHTS = {"dog": 5, "cat": 4, "rabbit": 1.3, "guinea pig": 0.8}
WEIGHT_RANGE = {"dog": (6.0, 38.0), "cat": (3.2, 7.5), "rabbit": (1.2, 3.4), "guinea pig": (0.7, 1.3)}

DIETS = {
    "dog": [
        "Royal Canin Hypoallergenic kibble", "Hill's i/d low-fat kibble", "grain-free salmon kibble",
        "James Wellbeloved lamb and rice", "a raw-fed mince mix", "Purina Pro Plan light",
        "Burns turkey and brown rice", "Lily's Kitchen wet trays", "Hill's Metabolic weight-loss kibble",
    ],
    "cat": [
        "Royal Canin Renal pouches", "Hill's c/d urinary kibble", "wet pouches only",
        "Lily's Kitchen chicken pate", "Purina One sensitive biscuits", "Hill's z/d hypoallergenic",
        "Applaws tuna tins", "Royal Canin Satiety biscuits",
    ],
    "rabbit": [
        "unlimited timothy hay plus Science Selective pellets", "Burgess Excel nuggets and meadow hay",
        "hay, greens and a spoon of pellets",
    ],
    "guinea pig": [
        "Oxbow adult pellets and hay", "Burgess Excel nuggets with added vitamin C",
        "hay, peppers and Science Selective pellets",
    ],
}  # fmt: skip
DIET_AMOUNTS = ["twice a day", "split into three small meals", "one measured scoop morning and night",
                "free-fed", "weighed out each morning"]  # fmt: skip

ALLERGENS = [
    "chicken", "beef", "flea saliva", "grass pollen", "penicillin", "wheat", "dairy", "dust mites",
    "lamb", "soya", "house dust", "storage mites",
]  # fmt: skip

VACCINES = {
    "dog": ["DHP booster", "leptospirosis jab", "kennel cough intranasal", "rabies jab"],
    "cat": ["FVRCP booster", "FeLV jab", "rabies jab"],
    "rabbit": ["RHD2 jab", "myxo-RHD combined jab"],
    "guinea pig": [],
}

# drug -> (description used in paraphrase questions, species it is used in, doses)
DRUGS = {
    "carprofen": ("anti-inflammatory painkiller", ("dog",), ["25 mg once daily", "50 mg twice daily", "75 mg once daily", "100 mg twice daily"]),
    "Metacam": ("liquid anti-inflammatory", ("dog", "cat", "rabbit", "guinea pig"), ["0.5 ml once daily", "1 ml once daily", "1.5 ml once daily", "0.3 ml once daily"]),
    "gabapentin": ("nerve-pain capsule", ("dog", "cat"), ["50 mg twice daily", "100 mg three times daily", "100 mg at night", "200 mg twice daily"]),
    "Apoquel": ("itch-relief tablet", ("dog",), ["5.4 mg once daily", "16 mg once daily", "3.6 mg twice daily"]),
    "methimazole": ("thyroid tablet", ("cat",), ["2.5 mg twice daily", "5 mg once daily", "2.5 mg once daily"]),
    "prednisolone": ("steroid", ("dog", "cat"), ["5 mg every other day", "10 mg once daily", "2.5 mg once daily"]),
    "Synulox": ("antibiotic course", ("dog", "cat"), ["250 mg twice daily", "50 mg twice daily", "500 mg twice daily"]),
    "Baytril": ("antibiotic drops", ("rabbit", "guinea pig"), ["0.2 ml twice daily", "0.4 ml once daily"]),
    "Vetmedin": ("heart medicine", ("dog",), ["2.5 mg twice daily", "5 mg twice daily", "1.25 mg twice daily"]),
    "Emeprid": ("gut-motility drops", ("rabbit", "guinea pig"), ["0.5 ml twice daily", "0.3 ml three times daily"]),
}  # fmt: skip

OPERATIONS = {
    "dog": ["spay", "castration", "dental with two extractions", "lump removal", "cruciate repair",
            "foreign body removal", "cherry eye surgery"],
    "cat": ["spay", "castration", "dental with extractions", "lump removal", "bladder stone removal"],
    "rabbit": ["spay", "castration", "molar burr under sedation"],
    "guinea pig": ["castration", "abscess lancing under sedation"],
}  # fmt: skip

APPOINTMENTS = [
    "annual check-up", "nail clip", "dental check", "post-op check", "skin consult", "blood test",
    "ear check", "weight clinic", "eye check", "lameness consult", "senior health check", "repeat bloods",
]  # fmt: skip

LAB_TESTS = {
    "blood panel": ["kidney values mildly raised", "all within normal range", "liver enzymes up a little",
                    "T4 high, consistent with hyperthyroidism", "white cells slightly raised"],
    "urine test": ["crystals present", "no infection found", "protein slightly high"],
    "skin scrape": ["no mites seen", "yeast overgrowth", "demodex mites found"],
    "faecal sample": ["giardia positive", "clear", "roundworm eggs seen"],
}  # fmt: skip

VETS = [
    "Dr Okafor", "Dr Lindqvist", "Dr Patel", "Dr MacLeod", "Dr Haddad", "Dr Brennan", "Dr Novak",
    "Dr Ferreira", "Dr Whitlock", "Dr Adeyemi", "Dr Kowalski", "Dr Sutherland",
]  # fmt: skip
ROTAS = [
    "Mondays and Wednesdays", "Tuesdays and Thursdays", "Wednesdays, Thursdays and Fridays",
    "Mondays, Tuesdays and alternate Saturdays", "Fridays and Saturday mornings", "Thursdays only",
    "Monday to Wednesday", "Tuesdays, Fridays and Sunday on-call",
]  # fmt: skip

INSURERS = {"Petplan": "PP", "Animal Friends": "AF", "ManyPets": "MP", "Agria": "AG", "Direct Line": "DL"}

CONTACT = [
    ("texts", "prefers texts to {phone}, not calls"),
    ("email", "wants everything by email, {email}"),
    ("calls after 5pm", "asks for phone calls after 5pm only, on {phone}"),
    ("WhatsApp", "likes reminders on WhatsApp at {phone}"),
    ("landline", "wants calls on the landline, {phone}, never the mobile"),
]  # fmt: skip
EMAIL_DOMAINS = ["gmail.com", "outlook.com", "btinternet.com", "yahoo.co.uk", "icloud.com"]

PLAN_REASONS = ["the cruciate bill", "the dental", "the spay", "last month's hospital stay", "the scans",
                "the lump removal", "the overnight drip"]  # fmt: skip

COMPLAINTS = [
    "waiting forty minutes past the appointment time", "being charged twice for one consult",
    "nobody ringing back with the lab results", "the car park being full again",
    "the wrong food being ordered in", "a rude reply on the phone", "the price of flea treatment going up",
    "the reminder letter going to the old address", "the cone sent home being too small",
    "the online booking page crashing",
]  # fmt: skip

AWAY = ["in Spain", "at a wedding in York", "in hospital for a knee op", "visiting family in Cork",
        "on a cruise", "moving house", "at a conference in Leeds", "camping in Wales"]  # fmt: skip

INVOICE_ITEMS = [
    "consult", "vaccination", "dental", "bloods", "x-rays", "nail clip", "flea and worm pack",
    "repeat prescription", "post-op meds", "boarding", "spay", "castration", "skin scrape",
    "food order", "hospitalisation", "lump removal",
]  # fmt: skip

NOISE = [
    "{O} popped in to buy a bag of treats and chatted about the weather.",
    "Confirmed {P}'s appointment by text, no changes.",
    "{O} rang to check our opening hours over the bank holiday.",
    "{O} mentioned the new puppy next door keeps barking all night.",
    "Left a voicemail for {O} about the reminder; nothing urgent.",
    "{O} dropped off a thank-you card and a tin of biscuits for the team.",
    "{O} asked whether we sell the blue collars again; told them next month.",
    "Reminder text sent to {O}, delivered fine.",
    "{O} chatted about their allotment while waiting, very cheerful today.",
    "{P} was very waggy and vocal in reception, made everyone laugh.",
    "{O} said the roadworks outside made them late, no harm done.",
    "{O} phoned just to say {P} is doing fine, nothing needed.",
    "Sent {O} the leaflet about the pet health club.",
    "{O} asked about parking permits; pointed them to the council website.",
    "{O} was in good spirits, talked about the football for a bit.",
    "Routine confirmation call with {O}, all still fine.",
    "{O} returned the borrowed carrier, cleaned.",
    "{P} got a treat from the jar on the way out, very pleased.",
    "{O} asked if we had any work experience places for their teenager.",
    "{O} rang back, only wanted to confirm we had received the email.",
    "{O} commented on the new paint in the waiting room.",
    "Card reader was down while {O} was paying; sorted after a restart.",
    "{O} brought us a photo of {P} in a Christmas jumper for the noticeboard.",
    "{O} asked for directions to the out-of-hours hospital, just in case.",
    "Chatted with {O} about a dog show on the telly.",
    "{O} popped in to pick up a poo-bag dispenser, paid cash.",
    "{O} stopped by to say hello on the way to the shops.",
    "Quick call from {O} to check we still close at six on Saturdays.",
]  # fmt: skip
