package sandbox

import (
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Every OPA builtin a policy may call is in one of the lists below, by what
// one call can cost; a builtin in none of them is refused when a policy is
// compiled (see capabilities), so a builtin a newer OPA adds stays out until
// someone has judged it. TestEveryBuiltinIsClassified keeps the lists and
// OPA's capabilities in step.

// smallBuiltins make a boolean, a number, a short string or a value they
// were handed (comparisons, type tests, lookups, hashes, time), in time
// proportional to their input: nothing to charge.
var smallBuiltins = []string{
	ast.Abs.Name, ast.All.Name, ast.Any.Name, ast.Assign.Name, ast.Ceil.Name, ast.Floor.Name, ast.Round.Name,
	ast.Contains.Name, ast.Count.Name, ast.EndsWith.Name, ast.StartsWith.Name, ast.Equality.Name, ast.Equal.Name,
	ast.NotEqual.Name, ast.GreaterThan.Name, ast.GreaterThanEq.Name, ast.LessThan.Name, ast.LessThanEq.Name,
	ast.Member.Name, ast.MemberWithKey.Name, ast.IsArray.Name, ast.IsBoolean.Name, ast.IsNull.Name,
	ast.IsNumber.Name, ast.IsObject.Name, ast.IsSet.Name, ast.IsString.Name, ast.TypeNameBuiltin.Name,
	ast.Max.Name, ast.Min.Name, ast.Sum.Name, ast.ToNumber.Name, ast.Trace.Name, ast.SemVerCompare.Name,
	ast.SemVerIsValid.Name, ast.StringCount.Name, ast.IndexOf.Name, ast.Base64IsValid.Name, ast.JSONIsValid.Name,
	ast.ObjectGet.Name, ast.ObjectSubset.Name, ast.RegoMetadataChain.Name, ast.RegoMetadataRule.Name,
	ast.UnitsParse.Name, ast.UnitsParseBytes.Name, ast.UUIDRFC4122.Name, ast.UUIDParse.Name, ast.URIIsValid.Name,
	ast.RandIntn.Name, ast.CryptoMd5.Name, ast.CryptoSha1.Name, ast.CryptoSha256.Name, ast.CryptoHmacMd5.Name, ast.CryptoHmacSha1.Name,
	ast.CryptoHmacSha256.Name, ast.CryptoHmacSha512.Name, ast.CryptoHmacEqual.Name, ast.NowNanos.Name, ast.ParseNanos.Name,
	ast.ParseRFC3339Nanos.Name, ast.ParseDurationNanos.Name, ast.Format.Name, ast.Date.Name, ast.Clock.Name,
	ast.Weekday.Name, ast.AddDate.Name, ast.Diff.Name, ast.InternalTestCase.Name, ast.Print.Name,
}

// chargedBuiltins make a new string or collection about as large as their
// input: each call is cheap, but a loop of them is not, so what they make
// is charged to the evaluation (Limits.MaxEvaluationBytes) as it comes out,
// before the evaluation keeps it.
var chargedBuiltins = []string{
	ast.Upper.Name, ast.Lower.Name, ast.Trim.Name, ast.TrimLeft.Name, ast.TrimRight.Name, ast.TrimPrefix.Name,
	ast.TrimSuffix.Name, ast.TrimSpace.Name, ast.StringReverse.Name, ast.Substring.Name, ast.FormatInt.Name,
	ast.Base64Encode.Name, ast.Base64Decode.Name, ast.Base64UrlEncode.Name, ast.Base64UrlEncodeNoPad.Name,
	ast.Base64UrlDecode.Name, ast.HexEncode.Name, ast.HexDecode.Name, ast.URLQueryEncode.Name,
	ast.URLQueryDecode.Name, ast.URLQueryEncodeObject.Name, ast.URLQueryDecodeObject.Name, ast.URIParse.Name,
	ast.GlobQuoteMeta.Name, ast.ArrayConcat.Name, ast.ArrayFlatten.Name, ast.ArrayReverse.Name,
	ast.ArraySlice.Name, ast.Union.Name, ast.Intersection.Name, ast.And.Name, ast.Or.Name, ast.Minus.Name,
	ast.SetDiff.Name, ast.ObjectUnion.Name, ast.ObjectUnionN.Name, ast.ObjectFilter.Name,
	ast.ObjectRemove.Name, ast.ObjectKeys.Name, ast.JSONFilter.Name, ast.JSONRemove.Name, ast.JSONPatch.Name,
	ast.Sort.Name, ast.WalkBuiltin.Name, ast.CastArray.Name, ast.CastSet.Name, ast.CastString.Name,
	ast.CastBoolean.Name, ast.CastNull.Name, ast.CastObject.Name, ast.Plus.Name, ast.Multiply.Name,
	ast.Divide.Name, ast.Rem.Name, ast.Product.Name, ast.BitsOr.Name, ast.BitsAnd.Name, ast.BitsNegate.Name, ast.BitsXOr.Name,
	ast.BitsShiftRight.Name, ast.InternalPrint.Name, ast.InternalTemplateString.Name,
	ast.ReachableBuiltin.Name, ast.CryptoX509ParseCertificates.Name,
	ast.CryptoX509ParseAndVerifyCertificates.Name, ast.CryptoX509ParseAndVerifyCertificatesWithOptions.Name,
	ast.CryptoX509ParseCertificateRequest.Name, ast.CryptoX509ParseKeyPair.Name,
	ast.CryptoX509ParseRSAPrivateKey.Name, ast.CryptoParsePrivateKeys.Name, ast.JWTDecode.Name,
	ast.JWTDecodeVerify.Name, ast.JWTEncodeSign.Name, ast.JWTEncodeSignRaw.Name, ast.JWTVerifyRS256.Name,
	ast.JWTVerifyRS384.Name, ast.JWTVerifyRS512.Name, ast.JWTVerifyPS256.Name, ast.JWTVerifyPS384.Name,
	ast.JWTVerifyPS512.Name, ast.JWTVerifyES256.Name, ast.JWTVerifyES384.Name, ast.JWTVerifyES512.Name,
	ast.JWTVerifyHS256.Name, ast.JWTVerifyHS384.Name, ast.JWTVerifyHS512.Name, ast.JWTVerifyEdDSA.Name,
	ast.RegexMatch.Name, ast.RegexMatchDeprecated.Name, ast.RegexIsValid.Name,
	ast.GlobMatch.Name, ast.AnyPrefixMatch.Name, ast.AnySuffixMatch.Name,
}

// sizedBuiltins can make far more than they are given: each call is sized
// from its operands before it runs, refused above Limits.MaxBuiltinBytes,
// and charged to the evaluation. OPA offers no per-call allocation limit of
// its own (only cancellation, which it checks inside numbers.range alone),
// but it lets a program replace a builtin's implementation; karpgate wraps
// these in every evaluation of the process, lint included, so a policy
// means the same in CI as at admission.
var sizedBuiltins = map[string]func(operands []*ast.Term, limit int64, s stop) int64{
	ast.NumbersRange.Name:               rangeSize(false),
	ast.NumbersRangeStep.Name:           rangeSize(true),
	ast.BitsShiftLeft.Name:              shiftSize,
	ast.Sprintf.Name:                    sprintfSize,
	ast.Concat.Name:                     concatSize,
	ast.Replace.Name:                    replaceSize,
	ast.ReplaceN.Name:                   replaceNSize,
	ast.Split.Name:                      splitSize,
	ast.SplitN.Name:                     splitNSize,
	ast.IndexOfN.Name:                   indexOfNSize,
	ast.RegexReplace.Name:               regexReplaceSize,
	ast.RegexSplit.Name:                 regexSplitSize,
	ast.RegexFind.Name:                  regexFindSize,
	ast.RegexFindAllStringSubmatch.Name: regexSubmatchSize,
	ast.JSONMarshal.Name:                marshalSize(1),
	ast.JSONMarshalWithOptions.Name:     marshalSize(1),
	ast.YAMLMarshal.Name:                marshalSize(2),
	ast.JSONUnmarshal.Name:              jsonUnmarshalSize,
	ast.YAMLUnmarshal.Name:              yamlUnmarshalSize,
	ast.YAMLIsValid.Name:                yamlUnmarshalSize,
}

// classified reports whether karpgate has judged what a call of the
// builtin costs.
func classified(name string) bool {
	if _, sized := sizedBuiltins[name]; sized {
		return true
	}
	return slices.Contains(smallBuiltins, name) || slices.Contains(chargedBuiltins, name)
}
