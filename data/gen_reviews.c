/* gen_reviews: writes a deterministic corpus of Yelp-style reviews as Yelp Review Full CSV
 * files (DIR/train.csv and DIR/test.csv), so the course has data without a download and
 * the same importer handles both this corpus and the real dataset.
 *
 * Every review is built from sentence templates whose sentiment depends on its star
 * rating (1 = angry ... 5 = glowing), filled with businesses, items, staff, prices, times
 * and waits. The combinations are many, so a small byte-level model keeps improving for a
 * long time, and the rating can be predicted from the words. All randomness comes from a
 * splitmix64 generator seeded by --seed, so every machine writes the same bytes. */
#include "cli.h"
#include "rng.h"
#include "yelp_csv.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const PROGRAM = "gen_reviews";

enum { EXIT_FAILED = 1, EXIT_BAD_USAGE = 2 };

/* ------------------------------------------------------------------ random numbers (common/rng.h) */

static int rng_percent(Rng *rng, uint32_t percent)
{
    return rng_below(rng, 100) < percent;
}

static int rng_range(Rng *rng, int lo, int hi)
{
    return lo + (int)rng_below(rng, (uint32_t)(hi - lo + 1));
}

/* Independent streams (train, test) from one user seed. */
static uint64_t derive_seed(uint64_t seed, uint64_t stream)
{
    Rng rng;
    rng_seed(&rng, seed ^ (stream * 0xD1B54A32D192ED03ull));
    rng_next_u64(&rng);
    return rng_next_u64(&rng);
}

/* ------------------------------------------------------------------ word lists */

typedef struct {
    const char *const *words;
    uint32_t count;
} WordList;

#define LIST(array) {array, (uint32_t)(sizeof array / sizeof array[0])}

static const char *pick(Rng *rng, WordList list)
{
    return list.words[rng_below(rng, list.count)];
}

/* Sentiment levels index pools: 0 = very negative, 2 = neutral, 4 = very positive. */
enum { NUM_LEVELS = 5 };

static const char *const first_names[] = {
    "Maria", "James", "Aisha", "Tom", "Priya", "Carlos", "Mei", "Derek", "Fatima", "Luis",
    "Hannah", "Omar", "Grace", "Tyler", "Sofia", "Kenji", "Brittany", "Andre", "Nadia",
    "Kevin", "Rosa", "Marcus", "Elena", "Jake", "Yuki", "Samantha", "Diego", "Chloe",
    "Raj", "Tanya", "Victor", "Lena", "Hector", "Jasmine", "Paul", "Ingrid", "Malik",
    "Olivia", "Sean", "Camila", "Trevor", "Ana", "Greg", "Leila", "Ben", "Dana", "Ivan",
    "Keisha", "Frank", "Noor", "Steve", "Bianca", "Ahmed", "Jenny", "Ricardo", "Molly",
};
static const char *const surnames[] = {
    "Garcia", "Nguyen", "Rossi", "Kim", "Patel", "Miller", "Okafor", "Schmidt", "Tanaka",
    "Murphy", "Lopez", "Chen", "Johnson", "Dubois", "Kowalski", "Silva", "Haddad",
    "Larsen", "Moreau", "O'Brien", "Sato", "Rivera", "Cohen", "Novak", "Park", "Singh",
    "Baker", "Fischer", "Costa", "Reyes", "Walsh", "Ivanov", "Mendoza", "Fraser",
};
static const char *const name_adjectives[] = {
    "Golden", "Blue", "Rusty", "Little", "Lucky", "Red", "Happy", "Old Town", "Silver",
    "Green", "Copper", "Sunny", "Urban", "Hidden", "Crooked", "Northside", "Iron",
};
static const char *const name_nouns[] = {
    "Spoon", "Oak", "Lantern", "Fox", "Anchor", "Bridge", "Sparrow", "Pine", "Kettle",
    "Door", "Harbor", "Mill", "Garden", "Crown", "Rooster", "Stone", "River",
};
static const char *const cities[] = {
    "Phoenix", "Las Vegas", "Pittsburgh", "Charlotte", "Madison", "Cleveland", "Toronto",
    "Montreal", "Scottsdale", "Tempe", "Henderson", "Mesa", "Chandler", "Champaign",
    "Edinburgh", "Calgary", "Gilbert", "Glendale", "Mississauga", "Urbana",
};
static const char *const street_names[] = {
    "Main", "Elm", "Oak", "Maple", "Camelback", "Mill", "Broad", "Lake", "Cedar",
    "Washington", "Central", "Fremont", "Queen", "King", "Bloor", "Spring", "Carson",
};
static const char *const street_kinds[] = {"Street", "Avenue", "Road", "Boulevard", "Drive"};
static const char *const ordinals[] = {"3rd", "4th", "5th", "7th", "12th", "16th", "24th"};
static const char *const nearby_places[] = {
    "near the mall", "downtown", "by the airport", "next to the gas station",
    "across from the library", "in the strip mall", "near campus", "by the highway exit",
};
static const char *const friends[] = {
    "wife", "husband", "boyfriend", "girlfriend", "sister", "brother", "mom", "dad",
    "best friend", "roommate", "coworker", "neighbor", "daughter", "son",
};
static const char *const days[] = {
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
};
static const char *const dayparts[] = {"morning", "afternoon", "evening", "night"};
static const char *const months[] = {
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
};
static const char *const nth_visits[] = {"second", "third", "fourth", "fifth", "tenth"};
static const char *const nits[] = {
    "parking situation", "long wait", "noise level", "prices", "tiny waiting area",
    "loud music", "slow checkout", "limited hours",
};

/* ------------------------------------------------------------------ businesses */

typedef enum { KIND_FOOD, KIND_SERVICE } BusinessKind;

typedef struct {
    const char *kind;     /* what a reviewer calls it: "taqueria" */
    BusinessKind family;  /* picks the food or service sentence pools */
    WordList name_words;  /* end of a business name: "Cantina" */
    WordList items;       /* what you order or get done; a leading '+' marks a plural */
    WordList staff;
    WordList places;      /* parts of the premises */
    int price_lo, price_hi; /* dollars for one item */
} Business;

static const char *const mexican_names[] = {"Taqueria", "Cantina", "Cocina", "Tacos"};
static const char *const mexican_items[] = {
    "+carne asada tacos", "+al pastor tacos", "carnitas burrito", "chile relleno",
    "+enchiladas verdes", "pozole", "+chips and salsa", "guacamole", "horchata", "mole",
    "+fish tacos", "tamale plate", "elote", "churro sundae", "breakfast burrito",
};
static const char *const restaurant_staff[] = {
    "server", "host", "manager", "bartender", "cashier", "busser",
};
static const char *const restaurant_places[] = {
    "dining room", "patio", "bathroom", "bar area", "parking lot", "entrance",
};
static const char *const italian_names[] = {"Trattoria", "Osteria", "Ristorante", "Kitchen"};
static const char *const italian_items[] = {
    "lasagna", "+potato gnocchi", "carbonara", "margherita pizza", "tiramisu",
    "+meatballs", "mushroom risotto", "+garlic knots", "osso buco", "bruschetta",
    "+cannoli", "chicken parm", "house red", "+clams linguine",
};
static const char *const sushi_names[] = {"Sushi", "Sushi Bar", "Izakaya", "Sushi House"};
static const char *const sushi_items[] = {
    "spicy tuna roll", "+salmon nigiri", "dragon roll", "miso soup", "+pork gyoza",
    "chirashi bowl", "omakase", "seaweed salad", "tempura udon", "+hand rolls",
    "yellowtail sashimi", "+edamame",
};
static const char *const sushi_staff[] = {"server", "sushi chef", "host", "manager"};
static const char *const sushi_places[] = {
    "sushi counter", "dining room", "bathroom", "private room", "entrance",
};
static const char *const burger_names[] = {"Burgers", "Grill", "Burger Bar", "Diner"};
static const char *const burger_items[] = {
    "double cheeseburger", "+fries", "+onion rings", "chocolate milkshake", "bacon burger",
    "veggie burger", "chili dog", "+sweet potato fries", "patty melt", "+chicken tenders",
};
static const char *const counter_staff[] = {"cashier", "cook", "manager", "server"};
static const char *const counter_places[] = {
    "dining area", "counter", "bathroom", "drive-thru", "parking lot",
};
static const char *const cafe_names[] = {"Coffee", "Cafe", "Roasters", "Espresso Bar"};
static const char *const cafe_items[] = {
    "latte", "cold brew", "cappuccino", "almond croissant", "+scones", "avocado toast",
    "chai", "breakfast sandwich", "matcha latte", "blueberry muffin", "pour-over",
    "oat milk flat white",
};
static const char *const cafe_staff[] = {"barista", "cashier", "manager", "owner"};
static const char *const cafe_places[] = {
    "seating area", "counter", "patio", "bathroom", "window bar",
};
static const char *const bakery_names[] = {"Bakery", "Bakeshop", "Patisserie", "Bread Co."};
static const char *const bakery_items[] = {
    "sourdough loaf", "+cinnamon rolls", "birthday cake", "+macarons", "baguette",
    "+eclairs", "lemon tart", "+kolaches", "cheesecake", "+morning buns",
};
static const char *const bakery_staff[] = {"cashier", "baker", "owner", "cake decorator"};
static const char *const bakery_places[] = {"display case", "counter", "seating area"};
static const char *const thai_names[] = {"Thai Kitchen", "Thai", "Noodle House", "Siam"};
static const char *const thai_items[] = {
    "pad thai", "green curry", "tom yum soup", "+spring rolls", "pad see ew",
    "mango sticky rice", "larb", "massaman curry", "thai iced tea", "+drunken noodles",
};
static const char *const thai_staff[] = {"server", "host", "owner", "delivery driver"};
static const char *const thai_places[] = {"dining room", "bathroom", "takeout counter"};
static const char *const bbq_names[] = {"BBQ", "Smokehouse", "Pit", "Barbecue"};
static const char *const bbq_items[] = {
    "brisket", "pulled pork sandwich", "+ribs", "mac and cheese", "+burnt ends",
    "cornbread", "coleslaw", "smoked turkey", "+collard greens", "banana pudding",
};
static const char *const bbq_staff[] = {"pitmaster", "cashier", "server", "manager"};
static const char *const bbq_places[] = {"line", "picnic tables", "dining room", "bathroom"};
static const char *const pizza_names[] = {"Pizza", "Pizzeria", "Slice Shop", "Pie Co."};
static const char *const pizza_items[] = {
    "pepperoni pizza", "+wings", "calzone", "white pie", "garlic bread", "caesar salad",
    "+breadsticks", "meat lovers pizza", "+garlic knots",
};
static const char *const pizza_staff[] = {"cashier", "delivery driver", "server", "manager"};
static const char *const pub_names[] = {"Pub", "Tavern", "Taproom", "Ale House"};
static const char *const pub_items[] = {
    "+fish and chips", "IPA on tap", "old fashioned", "+nachos", "shepherd's pie",
    "happy hour menu", "+sliders", "cocktail list", "+pretzel bites", "trivia night",
};
static const char *const pub_staff[] = {"bartender", "server", "bouncer", "manager"};
static const char *const pub_places[] = {"bar", "patio", "bathroom", "back room"};
static const char *const auto_names[] = {"Auto Repair", "Garage", "Motors", "Tire & Brake"};
static const char *const auto_items[] = {
    "oil change", "brake job", "+new tires", "transmission flush", "alignment",
    "AC repair", "inspection", "timing belt replacement", "check engine diagnosis",
    "battery replacement",
};
static const char *const auto_staff[] = {"mechanic", "service advisor", "manager", "owner"};
static const char *const auto_places[] = {
    "waiting room", "front counter", "parking lot", "service bay",
};
static const char *const salon_names[] = {"Salon", "Hair Studio", "Hair Co.", "Beauty Bar"};
static const char *const salon_items[] = {
    "haircut", "color", "balayage", "+highlights", "blowout", "keratin treatment",
    "trim", "+bangs", "root touch-up",
};
static const char *const salon_staff[] = {
    "stylist", "receptionist", "colorist", "owner", "assistant",
};
static const char *const salon_places[] = {
    "front desk", "waiting area", "shampoo station", "salon floor",
};
static const char *const barber_names[] = {"Barbershop", "Barbers", "Cuts", "Clip Joint"};
static const char *const barber_items[] = {
    "fade", "beard trim", "hot towel shave", "haircut", "lineup", "kids cut",
};
static const char *const barber_staff[] = {"barber", "owner", "receptionist"};
static const char *const barber_places[] = {"waiting area", "front window", "shop"};
static const char *const nail_names[] = {"Nails", "Nail Spa", "Nail Bar", "Nail Lounge"};
static const char *const nail_items[] = {
    "manicure", "pedicure", "gel manicure", "+acrylic nails", "nail art",
    "+dip powder nails", "polish change",
};
static const char *const nail_staff[] = {"nail tech", "receptionist", "owner"};
static const char *const nail_places[] = {"pedicure chairs", "front desk", "waiting area"};
static const char *const hotel_names[] = {"Hotel", "Inn", "Suites", "Lodge"};
static const char *const hotel_items[] = {
    "room", "king suite", "+beds", "breakfast buffet", "pool", "check-in", "+towels",
    "shower", "wifi", "room service",
};
static const char *const hotel_staff[] = {
    "front desk clerk", "housekeeper", "concierge", "valet", "manager",
};
static const char *const hotel_places[] = {
    "lobby", "hallway", "parking garage", "elevator", "fitness room",
};
static const char *const dental_names[] = {"Dental", "Family Dentistry", "Dental Care", "Smiles"};
static const char *const dental_items[] = {
    "cleaning", "filling", "crown", "root canal", "+x-rays", "whitening", "checkup",
    "night guard",
};
static const char *const dental_staff[] = {
    "hygienist", "dentist", "receptionist", "office manager", "assistant",
};
static const char *const office_places[] = {"waiting room", "exam room", "front desk"};
static const char *const vet_names[] = {
    "Animal Hospital", "Veterinary Clinic", "Pet Clinic", "Vet Care",
};
static const char *const vet_items[] = {
    "checkup", "+vaccines", "dental cleaning", "nail trim", "+blood tests",
    "spay surgery", "emergency visit",
};
static const char *const vet_staff[] = {"vet", "vet tech", "receptionist", "office manager"};
static const char *const gym_names[] = {"Fitness", "Gym", "Athletic Club", "Strength Co."};
static const char *const gym_items[] = {
    "membership", "spin class", "personal training session", "yoga class",
    "+locker rooms", "+free weights", "+showers", "cancellation process",
};
static const char *const gym_staff[] = {
    "trainer", "front desk attendant", "manager", "instructor",
};
static const char *const gym_places[] = {"locker room", "weight room", "studio", "front desk"};
static const char *const plumber_names[] = {"Plumbing", "Plumbing & Drain", "Rooter", "Pipe Works"};
static const char *const plumber_items[] = {
    "water heater install", "leak repair", "drain cleaning", "toilet replacement",
    "estimate", "garbage disposal repair", "+new pipes",
};
static const char *const plumber_staff[] = {"plumber", "dispatcher", "technician", "owner"};
static const char *const plumber_places[] = {"office", "work van", "front office"};
static const char *const cleaner_names[] = {"Cleaners", "Dry Cleaning", "Tailoring", "Press"};
static const char *const cleaner_items[] = {
    "suit", "+dress shirts", "wedding dress", "alterations", "+hemmed pants", "comforter",
    "leather jacket",
};
static const char *const cleaner_staff[] = {"clerk", "tailor", "owner"};
static const char *const cleaner_places[] = {"counter", "front window", "waiting area"};

static const Business businesses[] = {
    {"taqueria", KIND_FOOD, LIST(mexican_names), LIST(mexican_items),
     LIST(restaurant_staff), LIST(restaurant_places), 3, 16},
    {"Italian restaurant", KIND_FOOD, LIST(italian_names), LIST(italian_items),
     LIST(restaurant_staff), LIST(restaurant_places), 9, 38},
    {"sushi bar", KIND_FOOD, LIST(sushi_names), LIST(sushi_items),
     LIST(sushi_staff), LIST(sushi_places), 5, 60},
    {"burger joint", KIND_FOOD, LIST(burger_names), LIST(burger_items),
     LIST(counter_staff), LIST(counter_places), 4, 18},
    {"coffee shop", KIND_FOOD, LIST(cafe_names), LIST(cafe_items),
     LIST(cafe_staff), LIST(cafe_places), 3, 14},
    {"bakery", KIND_FOOD, LIST(bakery_names), LIST(bakery_items),
     LIST(bakery_staff), LIST(bakery_places), 3, 45},
    {"Thai restaurant", KIND_FOOD, LIST(thai_names), LIST(thai_items),
     LIST(thai_staff), LIST(thai_places), 8, 24},
    {"barbecue joint", KIND_FOOD, LIST(bbq_names), LIST(bbq_items),
     LIST(bbq_staff), LIST(bbq_places), 8, 32},
    {"pizza place", KIND_FOOD, LIST(pizza_names), LIST(pizza_items),
     LIST(pizza_staff), LIST(counter_places), 3, 28},
    {"pub", KIND_FOOD, LIST(pub_names), LIST(pub_items),
     LIST(pub_staff), LIST(pub_places), 6, 22},
    {"auto shop", KIND_SERVICE, LIST(auto_names), LIST(auto_items),
     LIST(auto_staff), LIST(auto_places), 40, 900},
    {"hair salon", KIND_SERVICE, LIST(salon_names), LIST(salon_items),
     LIST(salon_staff), LIST(salon_places), 25, 300},
    {"barbershop", KIND_SERVICE, LIST(barber_names), LIST(barber_items),
     LIST(barber_staff), LIST(barber_places), 15, 60},
    {"nail salon", KIND_SERVICE, LIST(nail_names), LIST(nail_items),
     LIST(nail_staff), LIST(nail_places), 15, 90},
    {"hotel", KIND_SERVICE, LIST(hotel_names), LIST(hotel_items),
     LIST(hotel_staff), LIST(hotel_places), 15, 400},
    {"dental office", KIND_SERVICE, LIST(dental_names), LIST(dental_items),
     LIST(dental_staff), LIST(office_places), 50, 1500},
    {"vet clinic", KIND_SERVICE, LIST(vet_names), LIST(vet_items),
     LIST(vet_staff), LIST(office_places), 30, 1200},
    {"gym", KIND_SERVICE, LIST(gym_names), LIST(gym_items),
     LIST(gym_staff), LIST(gym_places), 10, 120},
    {"plumbing service", KIND_SERVICE, LIST(plumber_names), LIST(plumber_items),
     LIST(plumber_staff), LIST(plumber_places), 90, 2500},
    {"dry cleaner", KIND_SERVICE, LIST(cleaner_names), LIST(cleaner_items),
     LIST(cleaner_staff), LIST(cleaner_places), 4, 120},
};
enum { NUM_BUSINESSES = sizeof businesses / sizeof businesses[0] };

/* ------------------------------------------------------------------ sentiment words */

static const char *const food_quality_0[] = {
    "inedible", "cold and greasy", "burnt to a crisp", "disgusting",
    "completely raw in the middle", "the worst I've ever had", "soggy and flavorless",
    "clearly microwaved",
};
static const char *const food_quality_1[] = {
    "bland", "underwhelming", "overcooked", "lukewarm", "too salty", "forgettable",
    "a little stale", "dry",
};
static const char *const food_quality_2[] = {
    "fine", "okay", "decent", "average", "about what you'd expect", "pretty standard",
    "not bad", "edible",
};
static const char *const food_quality_3[] = {
    "really good", "tasty", "fresh", "well seasoned", "solid", "flavorful", "nicely done",
    "hot and fresh",
};
static const char *const food_quality_4[] = {
    "incredible", "perfect", "out of this world", "the best I've ever had",
    "absolutely amazing", "unbelievably good", "melt-in-your-mouth good", "phenomenal",
};
static const WordList food_quality[NUM_LEVELS] = {
    LIST(food_quality_0), LIST(food_quality_1), LIST(food_quality_2),
    LIST(food_quality_3), LIST(food_quality_4),
};
static const char *const service_quality_0[] = {
    "botched", "a complete mess", "done completely wrong", "a disaster",
    "worse than useless", "a total rip-off", "sloppy and rushed", "unacceptable",
};
static const char *const service_quality_1[] = {
    "rushed", "sloppy", "not what I asked for", "just okay at best", "overpriced",
    "mediocre", "a little careless", "half done",
};
static const char *const service_quality_2[] = {
    "fine", "okay", "adequate", "standard", "about what you'd expect", "acceptable",
    "decent", "nothing special",
};
static const char *const service_quality_3[] = {
    "well done", "really good", "quick and careful", "thorough", "solid", "done right",
    "professional", "better than expected",
};
static const char *const service_quality_4[] = {
    "flawless", "perfect", "absolutely amazing", "the best I've ever had",
    "exactly what I wanted", "impeccable", "incredible", "done to perfection",
};
static const WordList service_quality[NUM_LEVELS] = {
    LIST(service_quality_0), LIST(service_quality_1), LIST(service_quality_2),
    LIST(service_quality_3), LIST(service_quality_4),
};
static const char *const staff_adjectives_0[] = {
    "rude", "incredibly rude", "condescending", "hostile", "dismissive", "beyond rude",
    "downright nasty", "completely unprofessional",
};
static const char *const staff_adjectives_1[] = {
    "slow", "inattentive", "a little cold", "distracted", "disorganized", "uninterested",
    "forgetful", "short with us",
};
static const char *const staff_adjectives_2[] = {
    "fine", "okay", "polite", "efficient", "professional enough", "quick", "businesslike",
    "nice enough",
};
static const char *const staff_adjectives_3[] = {
    "friendly", "helpful", "attentive", "patient", "kind", "welcoming", "knowledgeable",
    "cheerful",
};
static const char *const staff_adjectives_4[] = {
    "wonderful", "amazing", "the sweetest", "incredibly kind", "a total gem",
    "above and beyond", "fantastic", "a delight",
};
static const WordList staff_adjectives[NUM_LEVELS] = {
    LIST(staff_adjectives_0), LIST(staff_adjectives_1), LIST(staff_adjectives_2),
    LIST(staff_adjectives_3), LIST(staff_adjectives_4),
};
static const char *const overall_0[] = {
    "a nightmare", "a complete disaster", "a joke", "infuriating", "a waste of money",
    "awful", "horrible", "an insult",
};
static const char *const overall_1[] = {
    "disappointing", "a letdown", "underwhelming", "frustrating", "not great", "meh",
    "subpar", "mediocre",
};
static const char *const overall_2[] = {
    "fine", "okay", "average", "uneventful", "alright", "so-so", "unremarkable",
    "acceptable",
};
static const char *const overall_3[] = {
    "pleasant", "really nice", "great", "enjoyable", "easy", "a good time", "smooth",
    "relaxing",
};
static const char *const overall_4[] = {
    "perfect", "amazing", "unforgettable", "the best", "fantastic", "wonderful", "a dream",
    "outstanding",
};
static const WordList overall_adjectives[NUM_LEVELS] = {
    LIST(overall_0), LIST(overall_1), LIST(overall_2), LIST(overall_3), LIST(overall_4),
};
static const char *const quotes_0[] = {
    "that's not my problem", "we don't do refunds, period",
    "you must have done something to it", "if you don't like it, go somewhere else",
    "there's nothing I can do", "we're closing, you need to leave", "read the sign",
    "that's just how it is here", "I don't have time for this",
};
static const char *const quotes_1[] = {
    "we're short staffed today", "it'll be a few more minutes", "that's our policy",
    "I'll check on that", "the machine is down again", "we ran out of that an hour ago",
    "someone will be right with you",
};
static const char *const quotes_2[] = {
    "anything else?", "it'll be the usual wait", "cash or card?",
    "we're a little busy today", "have a good one", "next!",
};
static const char *const quotes_3[] = {
    "take your time", "let me know if you need anything", "good choice",
    "we'll get you in today", "come back and see us", "no problem at all",
};
static const char *const quotes_4[] = {
    "this one's on the house", "welcome back, we missed you!",
    "don't worry, we'll fix it for free", "you made my day", "no rush at all, we've got you",
    "it's our pleasure, truly", "we saved the last one for you",
};
static const WordList quotes[NUM_LEVELS] = {
    LIST(quotes_0), LIST(quotes_1), LIST(quotes_2), LIST(quotes_3), LIST(quotes_4),
};

/* ------------------------------------------------------------------ sentence templates
 * {slot}s are filled by fill_slot. {was}, {is}, {it} (subject) and {them} (object) agree
 * with the item named last. */

static const char *const general_0[] = {
    "The {item} {was} {qual}{end}",
    "Our {staff} was {sadj} from the moment we walked in{end}",
    "{name} the {staff} was {sadj} and made it clear we were a bother{end}",
    "We waited {min} minutes and nobody even acknowledged us{end}",
    "I paid {price} for the {item} and {it} {was}n't worth a fraction of that{end}",
    "When I complained, the {staff} said \"{quote}\" and walked away{end}",
    "I asked to speak to a manager and was told \"{quote}\"{end}",
    "The {place} was filthy and smelled like old garbage{end}",
    "The whole visit was {oadj}{end}",
    "It took {min} minutes just to get someone to look at us{end}",
    "Nobody answered the phone the {n} times I called to follow up{end}",
    "They charged me {bigprice} and refused to explain the bill{end}",
    "I will be disputing the charge with my bank{end}",
    "Do not waste your money on the {item}{end}",
    "The {item} {was} {qual}, and the {item2} {was} somehow worse{end}",
    "I have never felt so disrespected as a customer{end}",
    "My {friend} and I stood there for {min} minutes before anyone helped us{end}",
    "The {staff} argued with me in front of everyone in the {place}{end}",
    "They lost my booking for {time} and then blamed me for it{end}",
    "Everything about {biz} felt {oadj}{end}",
    "I've never written a bad review before, but {biz} earned this one{end}",
    "The {staff} actually laughed when I asked about the {item}{end}",
    "{price} for that? Highway robbery{end}",
    "We were still waiting after {min} minutes, so we walked out{end}",
    "The {item} {was} {qual} and nobody seemed to care{end}",
};
static const char *const general_1[] = {
    "The {item} {was} {qual}.",
    "Service was {sadj}.",
    "Our {staff} was {sadj}, and we had to flag someone down twice.",
    "We waited about {min} minutes, which felt long for a {day} {daypart}.",
    "For {price}, I expected a lot more from the {item}.",
    "The {place} could use a good cleaning.",
    "It wasn't terrible, but it wasn't good either.",
    "The {staff} just said \"{quote}\" and shrugged.",
    "The {staff} seemed more interested in their phone than in us.",
    "Prices have gone up and the quality has gone down.",
    "It used to be better a few years ago.",
    "{name} tried, but the place is clearly understaffed.",
    "The {item} {was} {qual} and the {item2} {was} not much better.",
    "Overall it was {oadj}.",
    "Nothing was awful, but nothing made me want to come back.",
    "The {place} was loud and cramped.",
    "I left a little annoyed and {price} poorer.",
    "The {item} {was} {qual}, which was a shame after all the good reviews.",
    "Not worth the {price}, in my opinion.",
    "The {staff} forgot about us twice.",
    "I wanted to love it, but it just didn't come together.",
};
static const char *const general_2[] = {
    "The {item} {was} {qual}.",
    "Service was {sadj}.",
    "Prices are about average for {city}; the {item} ran me {price}.",
    "Nothing special, nothing terrible.",
    "We waited around {min} minutes, which is normal for a {day}.",
    "The {place} is small but clean enough.",
    "It's convenient if you're already {street}.",
    "I'd come back if I was in the area, but I wouldn't go out of my way.",
    "Some things were great and some were forgettable.",
    "The {item2}, on the other hand, {was} better than I expected.",
    "The {staff} told us \"{quote}\" and that was about it.",
    "Overall the visit was {oadj}.",
    "{name} was {sadj}, if a little rushed.",
    "It's the kind of {kind} you go to because it's close.",
    "The {item} {was} {qual}, though the {item2} could use some work.",
    "Parking is a little tricky {street}.",
    "Honestly, it was {oadj}.",
    "The {staff} was {sadj} and got us out the door.",
    "I paid {price}, which seems about right.",
    "Not much else to say about {biz}.",
};
static const char *const general_3[] = {
    "The {item} {was} {qual}.",
    "Our {staff}, {name}, was {sadj}.",
    "We only waited {min} minutes even though it was busy.",
    "For {price}, the {item} is a good deal.",
    "The {place} was clean and comfortable.",
    "{name} checked on us a couple of times without being pushy.",
    "I'd recommend the {item} if it's your first visit.",
    "{name} said \"{quote}\" and actually meant it.",
    "Overall it was {oadj}.",
    "The {item} {was} {qual} and the {item2} {was} even better.",
    "My only complaint is that parking is tight {street}.",
    "Good value for {city}.",
    "The staff were {sadj} and clearly know what they're doing.",
    "It's become my go-to {kind} in {city}.",
    "A little pricey at {price}, but you get what you pay for.",
    "{name} made a great recommendation on the {item}.",
    "Everything ran on time, which is rare.",
    "I was pleasantly surprised by the {item}.",
    "Fair prices and {sadj} people.",
};
static const char *const general_4[] = {
    "The {item} {was} {qual}{end}",
    "{name} is {sadj} and remembered us from last time{end}",
    "We were taken care of in under {min} minutes{end}",
    "Worth every penny of the {price}{end}",
    "The {place} is spotless and beautiful{end}",
    "I've been coming here for {years} years and it has never let me down{end}",
    "At the end {name} said \"{quote}\" and I nearly teared up{end}",
    "Hands down the best {kind} in {city}{end}",
    "I tell everyone I know about this place{end}",
    "The {item} {was} {qual} and the {item2} {was} just as good{end}",
    "The whole experience was {oadj}{end}",
    "Our {staff} was {sadj} and went out of their way for us{end}",
    "Every single detail was thought through{end}",
    "I drove {n}0 minutes to get here and would do it again tomorrow{end}",
    "My {friend} still talks about the {item}{end}",
    "{name} and the whole team are {sadj}{end}",
    "Honestly the best {price} I've spent all year{end}",
    "I didn't want the visit to end{end}",
    "Everything was {oadj} from start to finish{end}",
};
static const WordList general_sentences[NUM_LEVELS] = {
    LIST(general_0), LIST(general_1), LIST(general_2), LIST(general_3), LIST(general_4),
};

static const char *const food_0[] = {
    "I found a hair in the {item}{end}",
    "The {item} {was} cold in the middle{end}",
    "My {friend} got sick that night after eating the {item}{end}",
    "The table was sticky and the silverware was dirty{end}",
    "They forgot our order entirely and we sat there for {min} minutes{end}",
    "The {item} tasted like {it} had been sitting under a heat lamp all day{end}",
    "We sent the {item} back twice and {it} came back worse{end}",
    "I watched a cook drop the {item} on the floor and serve {them} anyway{end}",
};
static const char *const food_1[] = {
    "The portions were small for {price}.",
    "The {item} needed salt.",
    "Our food came out lukewarm.",
    "They got my order wrong and it took {min} minutes to fix.",
    "The menu is bigger than it needs to be and nothing stands out.",
    "The drinks were watered down.",
    "My {item} showed up {min} minutes after everyone else's food.",
};
static const char *const food_2[] = {
    "The menu has plenty of options.",
    "Portions are reasonable for {price}.",
    "The {item} {was} {qual}, nothing to write home about.",
    "It's a standard {kind} menu with a few twists.",
    "They have a small patio if the weather is nice.",
    "Takeout was ready when they said it would be.",
};
static const char *const food_3[] = {
    "The portions are generous.",
    "Everything tasted fresh.",
    "The {item} came out hot and fast.",
    "Great spot for a casual {daypart} out with your {friend}.",
    "The {item} {was} {qual}, especially with the house sauce.",
    "Good drink menu too.",
};
static const char *const food_4[] = {
    "I'm still dreaming about the {item}{end}",
    "Every bite of the {item} was {qual}{end}",
    "The chef came out to check on our table{end}",
    "They made the {item} gluten free for my {friend} without any fuss{end}",
    "We ordered the {item} twice because {it} {was} {qual}{end}",
    "Dessert was on the house because it was my {friend}'s birthday{end}",
};
static const WordList food_sentences[NUM_LEVELS] = {
    LIST(food_0), LIST(food_1), LIST(food_2), LIST(food_3), LIST(food_4),
};

static const char *const service_0[] = {
    "The {item} {was} done wrong and I had to pay someone else to fix {them}{end}",
    "They booked me for {time} and I wasn't seen until {min} minutes later{end}",
    "Nobody mentioned the price until the bill came: {bigprice}{end}",
    "I had to come back {n} times for the same problem{end}",
    "They tried to upsell me on things I clearly didn't need{end}",
    "After the {item}, things were worse than when I walked in{end}",
    "They cancelled my appointment with no notice, twice{end}",
    "The {staff} didn't even look at me during the {item}{end}",
};
static const char *const service_1[] = {
    "The {item} took {min} minutes longer than they said.",
    "They quoted {price} and charged more.",
    "The {item} {was} {qual}, so I'll probably have to go back.",
    "Booking an appointment was a hassle.",
    "The {staff} rushed through the {item}.",
    "They were running behind and didn't tell anyone.",
};
static const char *const service_2[] = {
    "Booking online was easy.",
    "They quoted {price} and that's what I paid.",
    "The {item} took about as long as they said.",
    "Standard {kind}, standard prices.",
    "They had an opening the same week, which was convenient.",
    "The {staff} explained what they were doing, more or less.",
};
static const char *const service_3[] = {
    "They explained everything before starting the {item}.",
    "The {item} {was} finished ahead of schedule.",
    "The {staff} was honest about what I actually needed.",
    "They quoted {price} and stuck to it.",
    "Booking was easy and they texted a reminder.",
    "They fit me in the same day.",
};
static const char *const service_4[] = {
    "They fixed a problem two other places couldn't{end}",
    "{name} explained every step of the {item} and never rushed me{end}",
    "They came in under the quote, which never happens{end}",
    "I trust {name} completely now{end}",
    "They followed up a week later to make sure everything was okay{end}",
    "The {item} {was} {qual} and the price was fair{end}",
};
static const WordList service_sentences[NUM_LEVELS] = {
    LIST(service_0), LIST(service_1), LIST(service_2), LIST(service_3), LIST(service_4),
};

/* Openers, closers and updates are chosen by the review's rating, not per sentence. */
static const char *const openers_1[] = {
    "Worst {kind} I have ever been to{end}", "Stay away from {biz}{end}",
    "I wish I could give zero stars{end}", "Where do I even start with {biz}?",
    "I have never been treated so badly at {a_kind}{end}", "Do not go to {biz}{end}",
    "What a disaster{end}", "I really wanted to like {biz}, but this was unacceptable{end}",
    "One star is generous{end}", "Avoid {biz} at all costs{end}",
};
static const char *const openers_2[] = {
    "I had high hopes for {biz}, but it fell flat.", "Pretty disappointing visit.",
    "Not sure what all the hype is about.",
    "I've been to {biz} {n} times now and it keeps getting worse.",
    "This place used to be good.", "Meh. I expected more from {biz}.",
    "Two stars, and I'm being nice.", "Not the worst {kind} in {city}, but close.",
};
static const char *const openers_3[] = {
    "{biz} is fine.", "It's an okay {kind}.", "Three stars feels right for {biz}.",
    "Decent but not memorable.", "Solidly average.", "Mixed feelings about this one.",
    "A-OK.", "Middle of the road {kind}.",
};
static const char *const openers_4[] = {
    "Really solid {kind}.", "{biz} is a great find {street}.",
    "Very good experience overall.", "Glad we finally tried {biz}.", "Almost perfect.",
    "Good stuff!", "Four stars, and close to five.", "One of the better {kind}s in {city}.",
};
static const char *const openers_5[] = {
    "Absolutely love {biz}{end}", "Best {kind} in {city}, hands down{end}",
    "Five stars is not enough{end}", "Wow. Just wow{end}", "This place is a gem{end}",
    "I can't say enough good things about {biz}{end}", "Five stars, no question{end}",
    "If I could give {biz} ten stars I would{end}",
};
static const WordList openers[NUM_LEVELS] = {
    LIST(openers_1), LIST(openers_2), LIST(openers_3), LIST(openers_4), LIST(openers_5),
};
static const char *const closers_1[] = {
    "Never again{end}", "Save yourself the trouble and go anywhere else{end}",
    "I will not be back and neither should you{end}", "Avoid{end}",
    "Zero stars if I could{end}", "Shame on you, {biz}{end}", "Consider yourself warned{end}",
};
static const char *const closers_2[] = {
    "Probably won't be back.", "Maybe I'll give them another chance in a year.",
    "There are better options nearby.", "Two stars for the {item2}, which {was} okay.",
    "Hopefully the management reads this.", "I'll stick to the place across the street.",
};
static const char *const closers_3[] = {
    "It's fine if you're nearby.", "Might be back, might not.", "Average all around.",
    "Worth a try, but manage your expectations.", "Three stars.",
    "I'd give it three and a half if I could.",
};
static const char *const closers_4[] = {
    "We'll be back.", "Would recommend.", "Knocked off one star for the {nit}.",
    "Definitely coming back to try the {item2}.", "Four stars, easily.",
    "Recommended, just go early.",
};
static const char *const closers_5[] = {
    "Can't wait to come back{end}", "Highly recommend{end}", "Go, you won't regret it{end}",
    "Ten out of ten{end}", "Thank you {name} and the whole team{end}",
    "Five stars, every time{end}", "See you next week, {biz}{end}",
};
static const WordList closers[NUM_LEVELS] = {
    LIST(closers_1), LIST(closers_2), LIST(closers_3), LIST(closers_4), LIST(closers_5),
};
static const char *const updates_1[] = {
    "Update: the owner replied to this review and blamed me. Says it all{end}",
    "Update: still waiting on that refund, {n} weeks later{end}",
};
static const char *const updates_2[] = {
    "Update: they reached out and offered a discount, so I may try again.",
    "Update: went back on a {day}. Slightly better, still not great.",
};
static const char *const updates_3[] = {
    "Update: tried the {item2} on my second visit and it was decent.",
    "Update: still fine. Still nothing special.",
};
static const char *const updates_4[] = {
    "Update: came back with my {friend} and it was just as good.",
    "Update: the {nit} has improved since my first visit.",
};
static const char *const updates_5[] = {
    "Update: been back {n} more times and it keeps getting better{end}",
    "Update: {name} remembered my order on my last visit{end}",
};
static const WordList updates[NUM_LEVELS] = {
    LIST(updates_1), LIST(updates_2), LIST(updates_3), LIST(updates_4), LIST(updates_5),
};
/* Sentiment-free scene setting, shared by every rating, so the rating has to be read
 * from the other sentences. */
static const char *const context_sentences[] = {
    "We came in on a {day} {daypart} with my {friend}.",
    "I found {biz} on a whim after work.",
    "I've driven past {biz} {street} for years and finally stopped in.",
    "There were {n} of us.",
    "I booked online for {time} on a {day}.",
    "My {friend} recommended this place.",
    "It was my first time at {a_kind} in {city}.",
    "We stopped by around {time} on {day}.",
    "I needed {a_kind} close to work, and {biz} is right {street}.",
    "This was my {nth} visit.",
    "I've been a regular here for about {years} years.",
    "We were in {city} for the weekend and saw the reviews.",
    "Came here back in {month} with my {friend}.",
    "They're open until {time}, which is why we picked them.",
    "I called ahead on {day} to ask about the {item}.",
    "We had plans at {time}, so we were on a schedule.",
    "It was raining, so the {place} was packed.",
    "A friend from {city} told me about {biz}.",
};

/* Percent chance that a body sentence has each sentiment level, by star rating. */
static const uint32_t level_odds[5][NUM_LEVELS] = {
    {70, 25, 5, 0, 0},
    {15, 55, 25, 5, 0},
    {3, 27, 40, 27, 3},
    {0, 7, 18, 55, 20},
    {0, 0, 3, 22, 75},
};

/* ------------------------------------------------------------------ text building */

typedef struct {
    char *data;
    size_t len, cap;
} Text;

static void text_reserve(Text *text, size_t extra)
{
    if (text->len + extra <= text->cap)
        return;
    size_t cap = text->cap ? text->cap : 4096;
    while (cap < text->len + extra)
        cap *= 2;
    char *grown = realloc(text->data, cap);
    if (grown == NULL) {
        fprintf(stderr, "%s: out of memory\n", PROGRAM);
        exit(EXIT_FAILED);
    }
    text->data = grown;
    text->cap = cap;
}

static void text_put(Text *text, const char *bytes, size_t n)
{
    text_reserve(text, n);
    memcpy(text->data + text->len, bytes, n);
    text->len += n;
}

static void text_puts(Text *text, const char *s)
{
    text_put(text, s, strlen(s));
}

static void text_printf_int(Text *text, const char *format, int value)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, format, value);
    text_put(text, buf, (size_t)n);
}

/* ------------------------------------------------------------------ one review */

/* What stays fixed while one review is written, plus the agreement state. */
typedef struct {
    Rng *rng;
    const Business *business;
    char business_name[96];
    const char *staff_name;
    const char *friend;
    int level;             /* sentiment level of the sentence being written */
    const char *last_item; /* for {item2} to differ from {item} */
    int plural;            /* the last item named was plural: {was} -> were */
} Review;

static void put_item(Review *review, Text *out, int must_differ)
{
    const char *item = pick(review->rng, review->business->items);
    for (int tries = 0; must_differ && item == review->last_item && tries < 4; tries++)
        item = pick(review->rng, review->business->items);
    review->last_item = item;
    review->plural = item[0] == '+';
    text_puts(out, item + review->plural);
}

static void put_price(Review *review, Text *out, int multiplier)
{
    static const int cents[] = {0, 25, 50, 75, 95, 99};
    const Business *business = review->business;
    int dollars = rng_range(review->rng, business->price_lo, business->price_hi);
    if (multiplier > 1) {
        text_printf_int(out, "$%d", dollars * multiplier + rng_range(review->rng, 0, 9));
        return;
    }
    text_printf_int(out, "$%d", dollars);
    if (dollars < 100)
        text_printf_int(out, ".%02d", cents[rng_below(review->rng, 6)]);
}

/* Waits say a lot about a rating: long when angry, short when happy. */
static void put_minutes(Review *review, Text *out)
{
    static const int lo[NUM_LEVELS] = {35, 20, 10, 3, 2};
    static const int hi[NUM_LEVELS] = {120, 45, 25, 12, 10};
    int minutes = rng_range(review->rng, lo[review->level], hi[review->level]);
    if (review->level == 0)
        minutes -= minutes % 5; /* angry people round */
    text_printf_int(out, "%d", minutes);
}

static void put_clock_time(Review *review, Text *out)
{
    int hour = rng_range(review->rng, 7, 22);
    int minute = 15 * (int)rng_below(review->rng, 4);
    if (hour == 12 && minute == 0) {
        text_puts(out, "noon");
        return;
    }
    text_printf_int(out, "%d", hour > 12 ? hour - 12 : hour);
    if (minute != 0)
        text_printf_int(out, ":%02d", minute);
    text_puts(out, hour >= 12 ? "pm" : "am");
}

static void put_street(Review *review, Text *out)
{
    Rng *rng = review->rng;
    uint32_t style = rng_below(rng, 4);
    if (style == 0) {
        text_puts(out, pick(rng, (WordList)LIST(nearby_places)));
        return;
    }
    text_puts(out, style == 1 ? "off " : "on ");
    if (style == 3)
        text_puts(out, pick(rng, (WordList)LIST(ordinals)));
    else
        text_puts(out, pick(rng, (WordList)LIST(street_names)));
    text_puts(out, " ");
    text_puts(out, style == 3 ? "Avenue" : pick(rng, (WordList)LIST(street_kinds)));
}

/* Very negative and very positive sentences sometimes end with more energy. */
static void put_ending(Review *review, Text *out)
{
    static const char *const hot[] = {".", ".", ".", ".", "!", "!", "!", "!!", "!!", "!!!"};
    if (review->level == 0 || review->level == NUM_LEVELS - 1)
        text_puts(out, hot[rng_below(review->rng, 10)]);
    else
        text_puts(out, ".");
}

static void put_kind_with_article(Review *review, Text *out)
{
    const char *kind = review->business->kind;
    text_puts(out, strchr("AEIOUaeiou", kind[0]) ? "an " : "a ");
    text_puts(out, kind);
}

static int slot_is(const char *name, size_t len, const char *want)
{
    return strlen(want) == len && memcmp(name, want, len) == 0;
}

/* Slots whose words do not depend on the sentence's sentiment. */
static int fill_fixed_slot(Review *review, const char *name, size_t len, Text *out)
{
    Rng *rng = review->rng;
    if (slot_is(name, len, "biz")) text_puts(out, review->business_name);
    else if (slot_is(name, len, "kind")) text_puts(out, review->business->kind);
    else if (slot_is(name, len, "a_kind")) put_kind_with_article(review, out);
    else if (slot_is(name, len, "staff")) text_puts(out, pick(rng, review->business->staff));
    else if (slot_is(name, len, "place")) text_puts(out, pick(rng, review->business->places));
    else if (slot_is(name, len, "name")) text_puts(out, review->staff_name);
    else if (slot_is(name, len, "friend")) text_puts(out, review->friend);
    else if (slot_is(name, len, "city")) text_puts(out, pick(rng, (WordList)LIST(cities)));
    else if (slot_is(name, len, "day")) text_puts(out, pick(rng, (WordList)LIST(days)));
    else if (slot_is(name, len, "daypart")) text_puts(out, pick(rng, (WordList)LIST(dayparts)));
    else if (slot_is(name, len, "month")) text_puts(out, pick(rng, (WordList)LIST(months)));
    else if (slot_is(name, len, "nth")) text_puts(out, pick(rng, (WordList)LIST(nth_visits)));
    else if (slot_is(name, len, "nit")) text_puts(out, pick(rng, (WordList)LIST(nits)));
    else if (slot_is(name, len, "n")) text_printf_int(out, "%d", rng_range(rng, 2, 9));
    else if (slot_is(name, len, "years")) text_printf_int(out, "%d", rng_range(rng, 2, 15));
    else if (slot_is(name, len, "time")) put_clock_time(review, out);
    else if (slot_is(name, len, "street")) put_street(review, out);
    else return 0;
    return 1;
}

/* Slots that agree with the last item or follow the sentence's sentiment level. */
static int fill_sentiment_slot(Review *review, const char *name, size_t len, Text *out)
{
    Rng *rng = review->rng;
    int level = review->level;
    const WordList *quality =
        review->business->family == KIND_FOOD ? food_quality : service_quality;
    if (slot_is(name, len, "item")) put_item(review, out, 0);
    else if (slot_is(name, len, "item2")) put_item(review, out, 1);
    else if (slot_is(name, len, "was")) text_puts(out, review->plural ? "were" : "was");
    else if (slot_is(name, len, "is")) text_puts(out, review->plural ? "are" : "is");
    else if (slot_is(name, len, "it")) text_puts(out, review->plural ? "they" : "it");
    else if (slot_is(name, len, "them")) text_puts(out, review->plural ? "them" : "it");
    else if (slot_is(name, len, "qual")) text_puts(out, pick(rng, quality[level]));
    else if (slot_is(name, len, "sadj")) text_puts(out, pick(rng, staff_adjectives[level]));
    else if (slot_is(name, len, "oadj")) text_puts(out, pick(rng, overall_adjectives[level]));
    else if (slot_is(name, len, "quote")) text_puts(out, pick(rng, quotes[level]));
    else if (slot_is(name, len, "price")) put_price(review, out, 1);
    else if (slot_is(name, len, "bigprice")) put_price(review, out, rng_range(rng, 2, 5));
    else if (slot_is(name, len, "min")) put_minutes(review, out);
    else if (slot_is(name, len, "end")) put_ending(review, out);
    else return 0;
    return 1;
}

static void fill_slot(Review *review, const char *name, size_t len, Text *out)
{
    if (fill_fixed_slot(review, name, len, out) || fill_sentiment_slot(review, name, len, out))
        return;
    /* A typo in a template is a bug in this file: fail loudly rather than emit it. */
    fprintf(stderr, "%s: internal error: unknown template slot {%.*s}\n", PROGRAM,
            (int)len, name);
    exit(EXIT_FAILED);
}

static void expand(Review *review, const char *template_text, Text *out)
{
    const char *pos = template_text;
    while (*pos) {
        const char *open = strchr(pos, '{');
        if (open == NULL) {
            text_puts(out, pos);
            return;
        }
        text_put(out, pos, (size_t)(open - pos));
        const char *close = strchr(open, '}');
        fill_slot(review, open + 1, (size_t)(close - open - 1), out);
        pos = close + 1;
    }
}

/* Writes one sentence at the given sentiment level; capitalizes its first letter and,
 * now and then in a furious review, shouts the whole sentence. */
static void write_sentence(Review *review, const char *template_text, int level, Text *out)
{
    size_t start = out->len;
    review->level = level;
    expand(review, template_text, out);
    int shout = level == 0 && rng_percent(review->rng, 4);
    for (size_t i = start; i < out->len; i++) {
        if (shout || i == start)
            out->data[i] = (char)toupper((unsigned char)out->data[i]);
    }
}

static int pick_level(Rng *rng, int rating)
{
    uint32_t roll = rng_below(rng, 100);
    const uint32_t *odds = level_odds[rating - 1];
    for (int level = 0; level < NUM_LEVELS - 1; level++) {
        if (roll < odds[level])
            return level;
        roll -= odds[level];
    }
    return NUM_LEVELS - 1;
}

static const char *pick_body_template(Review *review, int level)
{
    Rng *rng = review->rng;
    if (rng_percent(rng, 18))
        return pick(rng, (WordList)LIST(context_sentences));
    const WordList *family = review->business->family == KIND_FOOD ? food_sentences
                                                                    : service_sentences;
    if (rng_percent(rng, 35))
        return pick(rng, family[level]);
    return pick(rng, general_sentences[level]);
}

static void make_business_name(Review *review)
{
    Rng *rng = review->rng;
    const char *word = pick(rng, review->business->name_words);
    const char *surname = pick(rng, (WordList)LIST(surnames));
    const char *adjective = pick(rng, (WordList)LIST(name_adjectives));
    const char *noun = pick(rng, (WordList)LIST(name_nouns));
    char *out = review->business_name;
    size_t size = sizeof review->business_name;
    switch (rng_below(rng, 5)) {
    case 0: snprintf(out, size, "%s's %s", surname, word); break;
    case 1: snprintf(out, size, "The %s %s", adjective, noun); break;
    case 2: snprintf(out, size, "%s %s %s", adjective, noun, word); break;
    case 3: snprintf(out, size, "%s %s", pick(rng, (WordList)LIST(cities)), word); break;
    default: snprintf(out, size, "%s on %s", word, pick(rng, (WordList)LIST(street_names)));
    }
}

static void start_review(Review *review, Rng *rng)
{
    review->rng = rng;
    review->business = &businesses[rng_below(rng, NUM_BUSINESSES)];
    review->staff_name = pick(rng, (WordList)LIST(first_names));
    review->friend = pick(rng, (WordList)LIST(friends));
    review->last_item = NULL;
    review->plural = 0;
    make_business_name(review);
}

/* Yelp writes a line break inside a review as the two characters backslash, n. */
static void put_paragraph_break(Rng *rng, Text *out)
{
    text_puts(out, rng_percent(rng, 75) ? "\\n\\n" : "\\n");
}

/* A review that says the same sentence twice reads like a bug, not like a person. */
static int already_planned(const char *const *plan, int count)
{
    for (int i = 0; i < count; i++) {
        if (plan[i] == plan[count])
            return 1;
    }
    return 0;
}

/* The sentence templates of one review: opener, body, closer. Returns the count. */
static int plan_review(Review *review, int rating, const char **plan, int *levels)
{
    Rng *rng = review->rng;
    int main_level = rating - 1;
    /* Two dice give 1..12 sentences, most often around six. */
    int count = 1 + (int)rng_below(rng, 6) + (int)rng_below(rng, 7);
    if (count == 1) {
        levels[0] = main_level;
        plan[0] = rng_percent(rng, 50) ? pick(rng, openers[main_level])
                                       : pick_body_template(review, main_level);
        return 1;
    }
    for (int i = 0; i < count; i++) {
        levels[i] = pick_level(rng, rating);
        plan[i] = pick_body_template(review, levels[i]);
        for (int tries = 0; tries < 3 && already_planned(plan, i); tries++)
            plan[i] = pick_body_template(review, levels[i]);
    }
    if (rng_percent(rng, 85)) {
        plan[0] = pick(rng, openers[main_level]);
        levels[0] = main_level;
    }
    if (rng_percent(rng, 85)) {
        plan[count - 1] = pick(rng, closers[main_level]);
        levels[count - 1] = main_level;
    }
    return count;
}

static void compose_review(Rng *rng, int rating, Text *out)
{
    Review review;
    start_review(&review, rng);
    const char *plan[12];
    int levels[12];
    int count = plan_review(&review, rating, plan, levels);
    /* Some longer reviews come in paragraphs, like the real ones. */
    int break_a = -1, break_b = -1;
    if (count >= 4 && rng_percent(rng, 14)) {
        break_a = rng_range(rng, 1, count - 1);
        break_b = rng_percent(rng, 40) ? rng_range(rng, 1, count - 1) : -1;
    }
    for (int i = 0; i < count; i++) {
        if (i == break_a || i == break_b)
            put_paragraph_break(rng, out);
        else if (i > 0)
            text_puts(out, " ");
        write_sentence(&review, plan[i], levels[i], out);
    }
    if (count >= 3 && rng_percent(rng, 4)) {
        put_paragraph_break(rng, out);
        write_sentence(&review, pick(rng, updates[rating - 1]), rating - 1, out);
    }
}

/* ------------------------------------------------------------------ files */

typedef struct {
    uint64_t seed;
    double train_mb;
    double test_mb;
    const char *out_dir;
} Options;

/* Writes reviews until the file holds at least target_bytes; returns the review count
 * or -1 on a write error. */
static long write_reviews(FILE *file, Rng *rng, size_t target_bytes)
{
    Text text = {0};
    size_t written = 0;
    long reviews = 0;
    while (written < target_bytes) {
        int rating = 1 + (int)rng_below(rng, 5);
        text.len = 0;
        compose_review(rng, rating, &text);
        if (yelp_write_record(file, rating, text.data, text.len) != 0) {
            reviews = -1;
            break;
        }
        size_t quotes_doubled = 0;
        for (size_t i = 0; i < text.len; i++)
            quotes_doubled += text.data[i] == '"';
        written += strlen("\"1\",\"") + text.len + quotes_doubled + strlen("\"\n");
        reviews++;
    }
    free(text.data);
    return reviews;
}

/* The CSV is written beside its final name and renamed into place when complete, so an
 * interrupted run never leaves a truncated corpus that make would consider up to date. */
static long write_csv(const char *path, uint64_t seed, double megabytes)
{
    struct stat info;
    if (stat(path, &info) == 0 && S_ISDIR(info.st_mode)) {
        fprintf(stderr, "%s: %s is a directory; refusing to write over it\n", PROGRAM, path);
        return -1;
    }
    size_t tmp_len = strlen(path) + sizeof ".tmp.XXXXXX";
    char *tmp_path = malloc(tmp_len);
    if (tmp_path == NULL)
        return -1;
    snprintf(tmp_path, tmp_len, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp_path);
    FILE *file = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (file == NULL) {
        fprintf(stderr, "%s: %s: cannot create: %s\n", PROGRAM, tmp_path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp_path);
        }
        free(tmp_path);
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask); /* mkstemp makes owner-only files */
    Rng rng;
    rng_seed(&rng, seed);
    long reviews = write_reviews(file, &rng, (size_t)(megabytes * 1e6));
    int close_failed = fclose(file) != 0;
    int failed = reviews < 0 || close_failed || rename(tmp_path, path) != 0;
    if (failed) {
        fprintf(stderr, "%s: %s: write failed: %s\n", PROGRAM, path, strerror(errno));
        unlink(tmp_path);
        reviews = -1;
    }
    free(tmp_path);
    return reviews;
}

/* Like mkdir -p: creates each missing component of dir. */
static int make_directories(const char *dir)
{
    char *path = strdup(dir);
    if (path == NULL)
        return -1;
    int rc = 0;
    for (char *slash = path + 1; rc == 0; slash++) {
        int at_end = *slash == '\0';
        if (*slash != '/' && !at_end)
            continue;
        *slash = '\0';
        struct stat info;
        int made = mkdir(path, 0777) == 0;
        int mkdir_errno = errno;
        if (!made && (stat(path, &info) != 0 || !S_ISDIR(info.st_mode))) {
            fprintf(stderr, "%s: --out-dir %s: cannot create %s: %s\n", PROGRAM, dir, path,
                    mkdir_errno == EEXIST ? "exists and is not a directory"
                                          : strerror(mkdir_errno));
            rc = -1;
        }
        if (at_end)
            break;
        *slash = '/';
    }
    free(path);
    return rc;
}

/* ------------------------------------------------------------------ command line */

static void print_usage(FILE *out)
{
    fprintf(out,
            "usage: %s [--seed N] [--train-mb X] [--test-mb X] [--out-dir DIR]\n"
            "  Writes DIR/train.csv and DIR/test.csv: synthetic reviews in the Yelp Review\n"
            "  Full CSV format (\"label\",\"text\"), identical on every machine for a seed.\n"
            "  --seed N       random seed, a whole number up to 2^53 (default 1)\n"
            "  --train-mb X   size of train.csv in megabytes of 10^6 bytes (default 20)\n"
            "  --test-mb X    size of test.csv, drawn from a different seed (default 2)\n"
            "  --out-dir DIR  output folder, created if missing (default data/generated/reviews)\n"
            "  --help         show this message\n",
            PROGRAM);
}

#define OPTION(field) offsetof(Options, field)
static const Flag flags[] = {
    {"seed", FLAG_U64, OPTION(seed), "random seed, a whole number up to 2^53", 0, 9007199254740992.0, 0},
    {"train-mb", FLAG_DOUBLE, OPTION(train_mb), "size of train.csv in megabytes of 10^6 bytes", 1e-6, 100000, 0},
    {"test-mb", FLAG_DOUBLE, OPTION(test_mb), "size of test.csv, drawn from a different seed", 1e-6, 100000, 0},
    {"out-dir", FLAG_STRING, OPTION(out_dir), "output folder, created if missing", 0, 0, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

/* Returns -1 to go on, or an exit status (0 after --help). */
static int parse_args(int argc, char **argv, Options *opt)
{
    FlagSet set = {"reviews", flags, opt};
    if (cli_wants_help(argc, argv, 1, &set, 1)) {
        print_usage(stdout);
        return 0;
    }
    char err[256];
    if (cli_parse(argc, argv, 1, &set, 1, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", PROGRAM, err);
        return EXIT_BAD_USAGE;
    }
    if (opt->out_dir[0] == '\0') {
        fprintf(stderr, "%s: --out-dir is empty\n", PROGRAM);
        return EXIT_BAD_USAGE;
    }
    return -1;
}

static char *join_path(const char *dir, const char *file)
{
    size_t len = strlen(dir) + 1 + strlen(file) + 1;
    char *path = malloc(len);
    if (path != NULL)
        snprintf(path, len, "%s/%s", dir, file);
    return path;
}

static int write_corpus(const Options *opt)
{
    char *train_path = join_path(opt->out_dir, "train.csv");
    char *test_path = join_path(opt->out_dir, "test.csv");
    int rc = EXIT_FAILED;
    if (train_path != NULL && test_path != NULL && make_directories(opt->out_dir) == 0) {
        long train = write_csv(train_path, derive_seed(opt->seed, 1), opt->train_mb);
        long test = train < 0 ? -1 : write_csv(test_path, derive_seed(opt->seed, 2),
                                                opt->test_mb);
        if (test >= 0) {
            printf("%s: seed %llu: %s (%ld reviews, %g MB), %s (%ld reviews, %g MB)\n",
                   PROGRAM, (unsigned long long)opt->seed, train_path, train, opt->train_mb,
                   test_path, test, opt->test_mb);
            rc = 0;
        }
    }
    free(train_path);
    free(test_path);
    return rc;
}

int main(int argc, char **argv)
{
    Options opt = {.seed = 1, .train_mb = 20, .test_mb = 2, .out_dir = "data/generated/reviews"};
    int rc = parse_args(argc, argv, &opt);
    if (rc >= 0)
        return rc;
    return write_corpus(&opt);
}
