"""The identity-leak scan's default words and the phrases that mark a model naming itself (reviewed 2026-12).

Kinds of word, because a name that is also an ordinary word must not flag every output that uses the
word ("Claude Monet", "Falcon 9", "the Gemini programme", "the palm of her hand"):

* :data:`ALWAYS` — coined names that mean a model or a vendor whatever the context or case ("OpenAI",
  "gpt-4", "DeepSeek", "通义千问"). Versioned forms of ambiguous names live here too ("Claude 3", "Phi-4",
  "Gemini 1.5", "Falcon-40B").
* :data:`NAMES` — names that are rarely anything else when capitalised ("Anthropic", "Mistral"); in lower
  case they count only after a cue ("made by anthropic"). A name whose mixed case is its mark ("PaLM",
  "LLaMA", "xAI", "OLMo") must be written in that case unless a cue precedes it.
* :data:`MODELS` and :data:`VENDORS` — ordinary words, first names and companies with other business
  ("Claude", "Gemini", "Llama", "Google", "Meta", "Amazon"). They count only where a cue says a model is
  naming itself or its maker: "I am Claude", "trained by Google", "je suis Claude", "由阿里云开发",
  "Googleによって訓練", or (models) a version or model word after the name ("Llama 3", "Gemini model"),
  or (models) a sentence about AI. A vendor after an authorship cue counts only in a sentence that speaks
  of itself or of AI ("I'm a language model trained by Google", not "Android is developed by Google").

* :data:`MAKERS` — companies and labs that make models ("OpenAI", "Anthropic", "Google Brain"): outputs name
  them as facts ("TensorFlow: developed by the Google Brain team"), so they count only where the output names
  its own maker (see the comment above the list).

Any of them followed by a capitalised word that is not part of a model's name ("Claude Monet",
"Nova Scotia", "Amazon River", "Google Maps") is someone or something else.

To update the list: add new model families to :data:`ALWAYS` when their name is coined, to :data:`MODELS`
when it is also an ordinary word (with its version pattern in :data:`VERSIONS`), new companies to
:data:`VENDORS`; then run ``pytest tests/batches/test_leakscan.py``, which measures recall and the
look-alike flag rate on ``tests/fixtures/leak_corpus.jsonl``, and add sentences for the new names there.

Cue patterns are regular expressions over *folded* text (lower case, diacritics stripped, look-alike
letters mapped to Latin); write them in lower case, without upper-case escapes (``\\S``, ``\\W``), and
without non-ASCII punctuation (they are folded like the text).
"""

from __future__ import annotations

ALWAYS: tuple[str, ...] = (
    # OpenAI
    "ChatGPT",
    "Chat GPT",
    "GPT-3",
    "GPT-3.5",
    "GPT-4",
    "GPT-4o",
    "GPT-4.1",
    "GPT-4.5",
    "GPT-5",
    "GPT-OSS",
    "GPT4All",
    "OpenAI o1",
    "OpenAI o3",
    "InstructGPT",
    "チャットGPT",
    "챗GPT",
    "챗지피티",
    # Anthropic
    "Claude 1",
    "Claude 2",
    "Claude 3",
    "Claude 4",
    "Claude Instant",
    "Claude Sonnet",
    "Claude Opus",
    "Claude Haiku",
    "Claude.ai",
    # Google
    "Google Bard",
    "Gemini Pro",
    "Gemini Ultra",
    "Gemini Flash",
    "Gemini Nano",
    "Gemini Advanced",
    "Gemini 1.0",
    "Gemini 1.5",
    "Gemini 2.0",
    "Gemini 2.5",
    "Gemma 2",
    "Gemma 3",
    "PaLM 2",
    "LaMDA",
    # Meta
    "Meta Llama",
    "Llama 2",
    "Llama 3",
    "Llama 3.1",
    "Llama 3.2",
    "Llama 3.3",
    "Llama 4",
    "Code Llama",
    # Mistral AI
    "Mistral 7B",
    "Mistral Large",
    "Mistral Medium",
    "Mistral Small",
    "Le Chat Mistral",
    "Mixtral",
    "Codestral",
    "Pixtral",
    "Ministral",
    "Magistral",
    "Devstral",
    # Microsoft, Amazon, Apple, IBM, Nvidia
    "Microsoft Copilot",
    "GitHub Copilot",
    "Bing Chat",
    "Phi-1",
    "Phi-2",
    "Phi-3",
    "Phi-3.5",
    "Phi-4",
    "Amazon Nova",
    "Amazon Titan",
    "Amazon Q",
    "Nova Pro",
    "Nova Lite",
    "Nova Micro",
    "Nova Premier",
    "Apple Intelligence",
    "watsonx",
    "Granite 3",
    "Nemotron",
    "Megatron-LM",
    # xAI
    "Grok-1",
    "Grok-2",
    "Grok-3",
    "Grok-4",
    # Chinese labs
    "Qwen",
    "QwQ",
    "Tongyi Qianwen",
    "通义千问",
    "通义",
    "千问",
    "DeepSeek",
    "ERNIE Bot",
    "ERNIE 3.5",
    "ERNIE 4",
    "ERNIE 4.5",
    "文心一言",
    "Kimi K2",
    "Kimi Chat",
    "ChatGLM",
    "GLM-4",
    "GLM-4.5",
    "智谱清言",
    "Yi-6B",
    "Yi-9B",
    "Yi-34B",
    "Yi-Large",
    "Yi-Lightning",
    "Doubao",
    "Hunyuan",
    "讯飞星火",
    "Baichuan",
    "InternLM",
    "MiniMax-M1",
    # Others
    "Command R",
    "Command R+",
    "Command A",
    "Cohere Command",
    "Jamba",
    "Falcon-7B",
    "Falcon-40B",
    "Falcon-180B",
    "Falcon LLM",
    "Stanford Alpaca",
    "Vicuna-7B",
    "Vicuna-13B",
    "Vicuna-33B",
    "WizardLM",
    "StableLM",
    "YandexGPT",
    "GigaChat",
    "HyperCLOVA",
    "하이퍼클로바",
)

NAMES: tuple[str, ...] = (
    "Mistral",
    "PaLM",
    "LLaMA",
    "xAI",
    "OLMo",
)

# Makers: companies and labs whose names mean nothing else, but which outputs name as facts ("TensorFlow:
# developed by the Google Brain team", "OpenAI was founded in 2015"). They count only where the output names
# its own maker: in a sentence that speaks of itself ("I was created by OpenAI", "my creators at Anthropic"),
# after a self cue ("I am an OpenAI model"), before a model word ("OpenAI's assistant"), after an authorship
# cue whose subject is an AI ("an AI language model developed by OpenAI"), or before "created me" (issue 27).
MAKERS: tuple[str, ...] = (
    "OpenAI",
    "Open AI",
    "オープンAI",
    "오픈AI",
    "Anthropic",
    "Google DeepMind",
    "DeepMind",
    "Google Brain",
    "Meta AI",
    "Mistral AI",
    "Moonshot AI",
    "月之暗面",
    "Zhipu",
    "智谱",
    "01.AI",
    "零一万物",
    "深度求索",
    "AI21 Labs",
    "Technology Innovation Institute",
    "LMSYS",
    "Stability AI",
    "Inflection AI",
    "Perplexity AI",
)

# Ordinary words, first names or other things that are also model names; each may have a version pattern.
MODELS: tuple[str, ...] = (
    "Claude",
    "Gemini",
    "Gemma",
    "Bard",
    "Llama",
    "Falcon",
    "Grok",
    "Phi",
    "Yi",
    "GLM",
    "Kimi",
    "ERNIE",
    "Nova",
    "Titan",
    "Copilot",
    "Granite",
    "Vicuna",
    "Alpaca",
    "Orca",
    "Zephyr",
    "Dolly",
    "Chinchilla",
    "Gopher",
    "Megatron",
    "MiniMax",
    "文心",
    "豆包",
    "混元",
    "星火",
    "元宝",
    "盘古",
    "百川",
    "クロード",
    "ジェミニ",
    "클로드",
    "제미나이",
    "Клод",
    "Алиса",
)

VENDORS: tuple[str, ...] = (
    "Google",
    "Meta",
    "Microsoft",
    "Amazon",
    "AWS",
    "IBM",
    "Nvidia",
    "Alibaba",
    "Alibaba Cloud",
    "Aliyun",
    "Baidu",
    "Tencent",
    "ByteDance",
    "Huawei",
    "iFlytek",
    "Moonshot",
    "Cohere",
    "AI21",
    "Hugging Face",
    "Stanford",
    "Perplexity",
    "Yandex",
    "Naver",
    "TII",
    "谷歌",
    "微软",
    "阿里云",
    "阿里巴巴",
    "百度",
    "腾讯",
    "字节跳动",
    "华为",
    "科大讯飞",
    "グーグル",
    "マイクロソフト",
    "구글",
    "네이버",
    "Гугл",
    "Яндекс",
    "Сбер",
    "جوجل",
    "गूगल",
)

# What after a model word makes it a model: a version or a variant (lower case, folded text). "Falcon 9",
# "Gemini 4" (a 1965 space flight), "Nova Scotia" and "phi = 1.618" stay unflagged.
_DIGIT = r"[\s\-]?\d"
VERSIONS: dict[str, str] = {
    "claude": r"[\s\-]?(?:\d|instant|sonnet|opus|haiku)",
    "gemini": r"[\s\-]?(?:\d\.\d|pro\b|ultra\b|flash\b|nano\b|advanced\b|exp\b|live\b)",
    "gemma": _DIGIT,
    "llama": r"[\s\-]?(?:\d|guard\b|index)",
    "falcon": r"[\s\-]?(?:\d+(?:\.\d+)?\s?b\b|mamba|h1\b|llm\b)",
    "grok": _DIGIT,
    "phi": r"[\s\-]?(?:[1-4](?![\d.])|3\.5|[1-4]-)",
    "yi": r"[\s\-]?(?:\d+b\b|\d\.\d|large\b|lightning\b|vision\b)",
    "glm": _DIGIT,
    "kimi": r"[\s\-]?(?:k\d|chat\b|\d)",
    "ernie": r"[\s\-]?(?:bot\b|\d)",
    "nova": r"[\s\-]?(?:pro|lite|micro|premier|canvas|reel|sonic)\b",
    "titan": r"[\s\-]?(?:text|embeddings?)\b",
    "granite": _DIGIT,
    "vicuna": r"[\s\-]?\d+b\b",
    "orca": _DIGIT,
    "megatron": r"[\s\-]?(?:lm|turing)\b",
    "minimax": r"[\s\-]?(?:m\d|text)",
}

# A capitalised word after a name that keeps it a model's or a vendor's name ("Claude Sonnet", "Nova Pro",
# "Anthropic PBC"); any other capitalised word makes it someone or something else ("Claude Monet").
NAME_PARTS: frozenset[str] = frozenset(
    """ai labs lab inc llc ltd pbc corp corporation gmbh research cloud deepmind brain team platforms
    technologies pro ultra flash nano sonnet opus haiku instant large medium small mini lite micro premier
    chat bot assistant guard code instruct turbo vision max plus advanced llm model models language
    """.split()
)

# Cues before a name (the window of folded text just before it must end with one of these).
_SELF_EN = (
    r"\bi\s*am|\bi'?m|\bmy\s+name\s+is|\bi\s+am\s+called|\bi'?m\s+called|\bcall\s+me|\bthis\s+is"
    r"|(?<!such\s)\bas|\bknown\s+as|\bnamed|\bcalled|\byou'?re\s+(?:talking|chatting|speaking)\s+(?:to|with)"
)
_AUTHOR_EN = (
    r"\b(?:trained|created|developed|made|built|designed|programmed|engineered|produced|released|launched"
    r"|fine-?tuned|owned|operated|provided|powered|maintained|taught|invented|coded|backed|pre-?trained"
    r"|post-?trained|crafted|constructed|deployed|hosted|brought\s+to\s+you)\s+(?:\w+\s+)?by"
    r"|\b(?:model|assistant|ai|chatbot|bot|llm|system|product)\s+(?:from|by|of|made\s+by)"
)
_SELF_OTHER = (
    r"\bje\s+suis|\bje\s+m'appelle|\bmoi\s+c'est|\bmon\s+nom\s+est"
    r"|\bich\s+bin|\bich\s+hei(?:ss|ß)e|\bmein\s+name\s+ist"
    r"|\bsoy|\bme\s+llamo|\bmi\s+nombre\s+es"
    r"|\bsono|\bmi\s+chiamo|\bil\s+mio\s+nome\s+e"
    r"|\bsou|\bme\s+chamo|\bmeu\s+nome\s+e"
    r"|\bik\s+ben|\bjestem|\bjag\s+ar|\bjeg\s+er|\bsaya(?:\s+adalah)?|\btoi\s+la|\bειμαι"
    r"|\bя|\bменя\s+зовут"
    r"|我是|我叫|我的名字是|私は|わたしは|僕は|私の名前は|저는|나는|제\s*이름은|أنا|اسمي|मैं"
)
_AUTHOR_OTHER = (
    r"\b(?:cree|creee|concu|concue|developpe|developpee|entraine|entrainee|forme|formee|fabrique|fabriquee"
    r"|programme|programmee|construit|construite|mis\s+au\s+point)\s+par"
    r"|\b(?:modele|assistant|ia|chatbot)(?:\s+de\s+langa(?:ge|ue))?\s+(?:de|d'|cree\s+par)"
    r"|\b(?:entwickelt|trainiert|erstellt|gebaut|programmiert|geschaffen|entworfen)\s+(?:von|durch)"
    r"|\b(?:sprachmodell|ki-modell|ki-assistent|assistent|modell|ki|chatbot|system)\s+(?:von|aus\s+dem\s+hause)"
    r"|\b(?:creado|creada|desarrollado|desarrollada|entrenado|entrenada|disenado|disenada|hecho|hecha"
    r"|programado|programada|construido|construida)\s+por"
    r"|\b(?:modelo|asistente|ia)(?:\s+de\s+lenguaje)?\s+de"
    r"|\b(?:creato|creata|sviluppato|sviluppata|addestrato|addestrata|progettato|progettata)\s+da"
    r"|\b(?:modello|assistente)(?:\s+linguistico)?\s+di"
    r"|\b(?:criado|criada|desenvolvido|desenvolvida|treinado|treinada|feito|feita)\s+(?:por|pela|pelo)"
    r"|\b(?:modelo|assistente)(?:\s+de\s+linguagem)?\s+(?:da|do)"
    r"|\b(?:ontwikkeld|getraind|gemaakt|gebouwd)\s+door|\btaalmodel\s+van"
    r"|\b(?:stworzony|stworzona|opracowany|opracowana|wytrenowany|wytrenowana|zbudowany)\s+przez"
    r"|\b(?:utvecklad|utvecklat|tranad|skapad|utviklet|trent|laget|udviklet|traenet|lavet)\s+(?:av|af)"
    r"|\b(?:dikembangkan|dilatih|dibuat|diciptakan)\s+oleh"
    r"|\b(?:phat\s+trien|dao\s+tao|tao\s+ra)\s+boi"
    r"|\b(?:создан|создана|созданный|созданная|разработан|разработана|разработанный|разработанная"
    r"|обучен|обучена|обученный|обученная)(?:\s+(?:компанией|командой|в|специалистами))?"
    r"|\b(?:модель|ассистент|помощник)\s+(?:от|компании)"
    r"|由|是由|来自|من\s+تطوير|من\s+قبل|بواسطة"
)
SELF_CUES = _SELF_EN + "|" + _SELF_OTHER
AUTHOR_CUES = _AUTHOR_EN + "|" + _AUTHOR_OTHER
# After "by/von/door X": optional "the team at".
AUTHOR_GAP = (
    r"(?:the\s+)?(?:(?:team|teams|people|engineers|researchers|folks|developers|scientists)\s+(?:at|of|from)\s+)?"
)

# Cues after a name: authorship in languages that put it after the maker.
AFTER_CUES = (
    r"によって|により|が開発|が訓練|が作|が提供|が構築|の(?:ai|aiアシスタント|言語モデル)"
    r"|(?:이|가|에서|에\s*의해)\s*(?:개발|만든|만들|훈련|학습|제작)"
    r"|开发|训练|研发|创建|打造|推出|设计的|的(?:ai|人工智能|语言模型|大模型|助手)"
    r"|द्वारा|tarafından|tarafindan"
)
# After a model word, in languages that put the verb last ("Claude입니다", "Claudeです"): the model speaking.
SELF_AFTER = r"\s{0,2}(?:입니다|이에요|예요|です|と申します|हूँ|हूं)"
# German/Dutch word order: "von Google entwickelt", "door Google getraind".
BEFORE_AND_AFTER = (
    r"\b(?:von|durch|door)",
    r"\s+(?:\w+\s+)?(?:entwickelt|trainiert|erstellt|geschaffen|ontwikkeld|getraind)",
)

# A maker followed by one of these made the writer ("OpenAI trained me", "Anthropic's assistant").
MAKER_AFTER = (
    r"(?:'s)?\s+(?:\w+\s+)?(?:trained|created|developed|made|built|designed|programmed|fine-?tuned|taught)\s+me\b"
    r"|'s\s+(?:\w+\s+)?(?:ai|assistant|model|language\s+model|chatbot|llm|bot)\b"
)
# An AI word just before an authorship cue: "an AI language model developed by", "this assistant was made by".
AI_BEFORE = (
    r"\b(?:ai|a\.i\.|llm|chatbot|bot|assistant|model|language\s+model|ia|ki|ии|модель|ассистент|人工智能|模型|助手)\b"
)

# A model word followed by one of these is a model ("Gemini model", "Claude AI").
MODEL_WORDS = r"[\s\-]*(?:ai\b|models?\b|llm\b|assistant\b|chatbot\b|language\s+model|bot\b|模型|助手)"

# A sentence about the writer itself or about AI (what a vendor cue needs, and what a model word alone needs).
# A sentence in which the writer speaks of itself (what a maker's name needs, unless a cue says more).
FIRST_PERSON = (
    r"\b(?:i|i'm|im|i've|i'd|me|my|mine|myself)\b|\bje\b|\bj'|\bmoi\b|\bich\b|\bmich\b|\bmir\b|\bmein\w*"
    r"|\bsoy\b|\bsou\b|\bsono\b|\bjestem\b|\bik\b|\bmijn\b|\bя\b|\bменя\b|\bмой\b|\bмоя\b|我|私|僕|저는|나는|제가"
    r"|أنا|मैं|मुझे|\bsaya\b|\btoi\b|\bjag\b|\bjeg\b|\bmig\b|\bben\b|\bfui\b|\bzostałem\b|\bzostałam\b"
)
SELF_OR_AI = (
    r"\b(?:i|i'm|im|me|my|myself)\b|\bje\b|\bj'|\bmoi\b|\bich\b|\bmich\b|\bmein\b|\bsoy\b|\bsou\b|\bsono\b"
    r"|\bjestem\b|\bik\b|\bя\b|\bменя\b|我|私|僕|저는|나는|أنا|मैं|\bsaya\b|\btoi\b|\bjag\b|\bjeg\b"
    r"|" + r"\b(?:ai|a\.i\.|llm|llms|chatbot|language\s+model|large\s+language|assistant|neural|ki|ia|ии)\b"
    r"|sprachmodell|modele\s+de\s+langage|modelo\s+de\s+lenguaje|языков|人工智能|大模型|语言模型|模型|助手"
    r"|言語モデル|アシスタント|언어\s*모델|어시스턴트|\bmodel\b|\bmodell\b|\bmodelo\b|\bmodele\b"
)
AI_ONLY = (
    r"\b(?:ai|a\.i\.|llm|llms|chatbot|language\s+model|large\s+language|neural|ki|ia|ии)\b"
    r"|sprachmodell|modele\s+de\s+langage|modelo\s+de\s+lenguaje|языков|人工智能|大模型|语言模型|言語モデル|언어\s*모델"
)
