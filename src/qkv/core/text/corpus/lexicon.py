"""Word tables for the built-in corpus.

Every entry is a pair ``(chinese, english)``.  Chinese strings are already
word-segmented: a multi-word entry such as ``"买了 一 斤"`` holds several
words separated by single spaces.  English strings are lowercase.

The tables are plain tuples so that they are easy to read, easy to print,
and cannot be changed by accident at run time.  The generator in
``qkv.corpus`` only ever combines these entries; it never invents words.
"""

from __future__ import annotations

from typing import TypedDict

Pair = tuple[str, str]  # (chinese, english)

# ---------------------------------------------------------------------------
# Word sense: one Chinese word, two meanings.
# ---------------------------------------------------------------------------
# For each ambiguous word we list
#   en_food / en_company: how the word is written in English in each sense,
#   food_cues / company_cues: the verb phrase that comes before the word and
#       decides the sense,
#   food_tails: what can be said about the food afterwards.
# Every sense uses the shared COMPANY_TAILS for the company meaning.


class Ambiguous(TypedDict):
    en_food: str
    en_company: str
    food_cues: tuple[Pair, ...]
    food_tails: tuple[Pair, ...]


AMBIGUOUS: dict[str, Ambiguous] = {
    "苹果": {
        "en_food": "apple",
        "en_company": "apple",
        "food_cues": (
            ("吃了", "ate"),
            ("洗了", "washed"),
            ("买了 一 斤", "bought a pound of"),
            ("削了", "peeled"),
            ("尝了", "tasted"),
        ),
        "food_tails": (
            ("味道 很 甜", "it tasted sweet"),
            ("味道 有点 酸", "it tasted a bit sour"),
            ("看起来 很 新鲜", "it looked fresh"),
            ("吃 起来 很 脆", "it was crunchy"),
        ),
    },
    "小米": {
        "en_food": "millet",
        "en_company": "xiaomi",
        "food_cues": (
            ("煮了", "cooked"),
            ("洗了", "washed"),
            ("买了 一 斤", "bought a pound of"),
            ("吃了", "ate"),
        ),
        "food_tails": (
            ("煮 出来 的 粥 很 香", "the porridge smelled good"),
            ("颗粒 很 饱满", "the grains were plump"),
            ("看起来 很 新鲜", "it looked fresh"),
        ),
    },
    "黑莓": {
        "en_food": "blackberry",
        "en_company": "blackberry",
        "food_cues": (
            ("吃了", "ate"),
            ("洗了", "washed"),
            ("买了 一 斤", "bought a pound of"),
            ("摘了", "picked"),
            ("尝了", "tasted"),
        ),
        "food_tails": (
            ("味道 很 甜", "it tasted sweet"),
            ("味道 有点 酸", "it tasted a bit sour"),
            ("看起来 很 新鲜", "it looked fresh"),
            ("闻起来 很 香", "it smelled good"),
        ),
    },
}

COMPANY_CUES = (
    ("投资了", "invested in"),
    ("研究了", "studied"),
    ("加入了", "joined"),
    ("关注了", "followed"),
    ("看好", "bet on"),
)

COMPANY_TAILS = (
    ("股价 上涨了", "its stock rose"),
    ("股价 下跌了", "its stock fell"),
    ("新 手机 上市了", "its new phone came out"),
    ("利润 增长了", "its profits grew"),
)

# Who, when, and an optional neutral description placed between the cue
# and the ambiguous word (it fits both senses, so it carries no hint).
SENSE_SUBJECTS = (
    ("我", "i"),
    ("他", "he"),
    ("她", "she"),
    ("小明", "xiaoming"),
    ("小红", "xiaohong"),
    ("我们", "we"),
    ("我 的 朋友", "my friend"),
    ("爸爸", "dad"),
)

SENSE_TIMES = (
    ("", ""),
    ("昨天", "yesterday"),
    ("上周", "last week"),
    ("前天", "the day before yesterday"),
    ("今天 早上", "this morning"),
    ("刚才", "just now"),
)

# (chinese, english word before the verb, english word after the object)
SENSE_ADVERBS = (
    ("", "", ""),
    ("终于", "finally", ""),
    ("又", "", "again"),
)

# The generator adds 的 after the Chinese form; the English form becomes a
# "which ..." clause after the word.
SENSE_MODIFIERS = (
    ("", ""),
    ("朋友 推荐", "which a friend recommended"),
    ("网上 很 火", "which is popular online"),
    ("大家 都 在 讨论", "which everyone is talking about"),
    ("早就 听说 过", "which we had heard about"),
)

# ---------------------------------------------------------------------------
# Word order: who did what to whom.
# ---------------------------------------------------------------------------
# (chinese, english subject form, english object form)
PEOPLE = (
    ("我", "i", "me"),
    ("你", "you", "you"),
    ("他", "he", "him"),
    ("她", "she", "her"),
    ("小明", "xiaoming", "xiaoming"),
    ("小红", "xiaohong", "xiaohong"),
    ("妈妈", "mom", "mom"),
    ("老师", "the teacher", "the teacher"),
    ("哥哥", "my brother", "my brother"),
    ("同桌", "my deskmate", "my deskmate"),
)

# (chinese verb, english verb, chinese reaction, english reaction).
# In the reaction, {b} is the person acted upon and {a} the one who acted.
# The reaction always belongs to the person acted upon, so the continuation
# depends on word order and not only on which words were used.
ORDER_VERBS = (
    ("打了", "hit", "{b} 哭了", "{b} cried"),
    ("骂了", "scolded", "{b} 生气了", "{b} got angry"),
    ("推了", "pushed", "{b} 摔倒了", "{b} fell down"),
    ("帮了", "helped", "{b} 谢谢 {a}", "{b} thanked {a}"),
    ("表扬了", "praised", "{b} 笑了", "{b} smiled"),
    ("吓唬了", "frightened", "{b} 尖叫了", "{b} screamed"),
    ("叫了", "called", "{b} 回头了", "{b} turned around"),
    ("骗了", "tricked", "{b} 上当了", "{b} was fooled"),
)

ORDER_TIMES = (
    ("", ""),
    ("昨天", "yesterday"),
    ("今天 早上", "this morning"),
    ("上周末", "last weekend"),
    ("下课 以后", "after class"),
)

ORDER_PLACES = (
    ("", ""),
    ("在 学校", "at school"),
    ("在 公园 里", "in the park"),
    ("在 家里", "at home"),
)

# ---------------------------------------------------------------------------
# Association at a distance.
# ---------------------------------------------------------------------------
# Drug -> a side effect it is commonly known for.  These are simplified
# textbook pairings chosen for a toy data set; they are not medical advice.
DRUGS = (
    ("华法林", "warfarin", "黑便", "black stools"),
    ("阿司匹林", "aspirin", "胃痛", "stomach pain"),
    ("二甲双胍", "metformin", "腹泻", "diarrhea"),
    ("他汀", "a statin", "肌肉 酸痛", "muscle aches"),
    ("氨氯地平", "amlodipine", "脚踝 水肿", "swollen ankles"),
    ("依那普利", "enalapril", "干咳", "a dry cough"),
    ("泼尼松", "prednisone", "血糖 升高", "high blood sugar"),
    ("呋塞米", "furosemide", "低 血钾", "low potassium"),
    ("异烟肼", "isoniazid", "手脚 麻木", "numb hands and feet"),
    ("左甲状腺素", "levothyroxine", "心慌", "palpitations"),
)

PATIENTS = (
    ("患者", "the patient"),
    ("张 先生", "mr zhang"),
    ("李 阿姨", "aunt li"),
    ("王 大爷", "grandpa wang"),
    ("一位 老人", "an old man"),
    ("刘 女士", "ms liu"),
    ("这位 病人", "this patient"),
)

DRUG_STARTS = (
    ("", ""),
    ("上个月", "last month"),
    ("去年", "last year"),
    ("住院 期间", "in hospital"),
)

# Neutral things that happened meanwhile (past tense in English).
DRUG_FILLERS = (
    ("每天 早睡 早起", "went to bed early every day"),
    ("坚持 散步", "kept walking every day"),
    ("饮食 很 清淡", "ate light food"),
    ("按时 复查", "had regular checkups"),
    ("心情 不错", "felt cheerful"),
    ("没有 喝酒", "did not drink alcohol"),
)

DRUG_DELAYS = (
    ("三 天", "three days"),
    ("两 周", "two weeks"),
    ("一个 月", "a month"),
    ("半年", "half a year"),
)

# Job -> place of work.
JOBS = (
    ("医生", "a doctor", "医院", "at the hospital"),
    ("老师", "a teacher", "学校", "at the school"),
    ("厨师", "a cook", "饭店", "at the restaurant"),
    ("警察", "a police officer", "派出所", "at the police station"),
    ("飞行员", "a pilot", "机场", "at the airport"),
    ("图书管理员", "a librarian", "图书馆", "at the library"),
    ("农民", "a farmer", "农田", "on the farm"),
    ("邮递员", "a mail carrier", "邮局", "at the post office"),
)

WORKERS = (
    ("小王", "xiaowang"),
    ("小李", "xiaoli"),
    ("老张", "laozhang"),
    ("老陈", "laochen"),
    ("阿芳", "afang"),
    ("大伟", "dawei"),
    ("小周", "xiaozhou"),
    ("阿强", "aqiang"),
)

# Neutral facts about a person (present tense in English).
WORKER_FILLERS = (
    ("住 在 城东", "lives in the east of town"),
    ("喜欢 爬山", "likes hiking"),
    ("养了 一只 猫", "has a cat"),
    ("每天 坐 地铁", "takes the subway every day"),
    ("会 弹 吉他", "can play the guitar"),
    ("周末 常常 钓鱼", "often goes fishing on weekends"),
)

# ---------------------------------------------------------------------------
# Plain sentences about categories of things (for embedding experiments).
# ---------------------------------------------------------------------------
PLAIN_SUBJECTS = (
    ("我", "i"),
    ("小明", "xiaoming"),
    ("小红", "xiaohong"),
    ("妈妈", "mom"),
    ("爷爷", "grandpa"),
    ("他们", "they"),
)

# category -> (words, templates).  {S} is a subject, {X} and {Y} are two
# different words of the category.
CATEGORIES = {
    "fruit": (
        (
            ("苹果", "apple"),
            ("香蕉", "banana"),
            ("梨", "pear"),
            ("葡萄", "grape"),
            ("橘子", "orange"),
            ("西瓜", "watermelon"),
            ("桃子", "peach"),
            ("草莓", "strawberry"),
            ("黑莓", "blackberry"),
        ),
        (
            ("{S} 吃了 一些 {X}", "{S} ate some {X}"),
            ("{S} 在 市场 上 买了 {X}", "{S} bought {X} at the market"),
            ("桌子 上 的 {X} 看起来 很 新鲜", "the {X} on the table looked fresh"),
            ("{X} 是 一种 水果", "{X} is a kind of fruit"),
            ("夏天 的 {X} 又 便宜 又 好吃", "in summer {X} is cheap and tasty"),
            ("妈妈 把 {X} 洗 干净 了", "mom washed the {X} clean"),
            ("{S} 从来 不 喜欢 {X}", "{S} never liked {X}"),
            ("{X} 和 {Y} 都 是 水果", "{X} and {Y} are both fruits"),
        ),
    ),
    "animal": (
        (
            ("猫", "cat"),
            ("狗", "dog"),
            ("兔子", "rabbit"),
            ("马", "horse"),
            ("羊", "sheep"),
            ("鸭子", "duck"),
        ),
        (
            ("{S} 在 农场 看到了 {X}", "{S} saw a {X} on the farm"),
            ("{X} 在 院子 里 跑 来 跑 去", "the {X} ran around in the yard"),
            ("{X} 是 一种 动物", "the {X} is an animal"),
            ("{S} 喂了 {X}", "{S} fed the {X}"),
            ("{X} 和 {Y} 都 是 动物", "the {X} and the {Y} are both animals"),
        ),
    ),
    "energy": (
        (
            ("原子能", "atomic energy"),
            ("太阳能", "solar energy"),
            ("风能", "wind energy"),
            ("水能", "hydropower"),
            ("煤炭", "coal"),
            ("天然气", "natural gas"),
        ),
        (
            ("{X} 可以 用来 发电", "{X} can be used to make electricity"),
            ("国家 正在 发展 {X}", "the country is developing {X}"),
            ("科学家 在 研究 {X}", "scientists are studying {X}"),
            ("{X} 是 一种 能源", "{X} is a source of energy"),
            ("{X} 和 {Y} 都 是 能源", "{X} and {Y} are both energy sources"),
        ),
    ),
    "company": (
        (
            ("华为", "huawei"),
            ("联想", "lenovo"),
            ("腾讯", "tencent"),
            ("百度", "baidu"),
            ("苹果", "apple"),
            ("小米", "xiaomi"),
        ),
        (
            ("{X} 是 一家 科技 公司", "{X} is a tech company"),
            ("{S} 以前 在 {X} 上班", "{S} used to work at {X}"),
            ("{X} 今年 推出了 新 产品", "{X} launched new products this year"),
            ("{X} 和 {Y} 都 是 公司", "{X} and {Y} are both companies"),
        ),
    ),
}
