//! How many words each section of an article is asked for: the depth's words, the
//! summary's share set aside, shared by the claims each section may state, at one rate
//! per claim, and bounded by the section's evidence.

use crate::research::Depth;

/// Body words an article may run to at each depth, for a model that has the evidence
/// (the claims bound it; never padded): quick 300–800, standard 1,200–3,000, deep
/// 2,500–6,000. Each section is asked for its share of the upper bound.
pub fn body_words(depth: Depth) -> usize {
    match depth {
        Depth::Quick => 800,
        Depth::Standard => 3000,
        Depth::Deep => 6000,
    }
}

/// Share of an article's words the summary takes; the sections share the rest.
const SUMMARY_SHARE: f64 = 0.2;
/// Words a section may spend on each claim it shows: about a sentence and a half.
const WORDS_PER_CLAIM: usize = 45;
/// Words of a short sentence that states a fact with its figure, period and source:
/// the least a claim is given while the body has room. (At 16, relayed writers cut
/// extracted facts to meet their counts on three shares of four.)
const SENTENCE_WORDS: f64 = 20.0;
/// Fewest words a section is asked for.
const MIN_SECTION_WORDS: usize = 60;
/// A section's share is a whole number of these: one claim more or less elsewhere
/// (a refresh that found one new fact) leaves the other sections' prompts as they were,
/// so the response cache answers them.
const WORDS_STEP: usize = 25;

/// Each section's share of the depth's words, the summary's share set aside: at least
/// [`MIN_SECTION_WORDS`] each, and the rest at one rate per claim it may state
/// (`claims`, per section), so that a section its follow-ups joined is not asked to say
/// twice as much in the same words; each rounded down to [`WORDS_STEP`]. The rate shares
/// the rest over `capacity`, the most claims the sections could hold (their
/// subquestions' and the follow-ups' the depth allows), not over the claims found, and
/// is at least [`SENTENCE_WORDS`] while the claims found fit at that rate: a section's
/// words then follow its own claims, and a refresh that found new claims for one
/// section leaves the others' prompts as they were — unless the claims found no longer
/// fit at that rate (over 90–100 at standard), when the rate is the body's words over them
/// and every share moves. Together they stay within the body's words unless the
/// minimums alone exceed them.
pub fn section_shares(depth: Depth, claims: &[usize], capacity: usize) -> Vec<usize> {
    let body = body_words(depth) as f64 * (1.0 - SUMMARY_SHARE);
    let rest = (body - (MIN_SECTION_WORDS * claims.len()) as f64).max(0.0);
    let total: usize = claims.iter().sum();
    // At least a short sentence per claim while the claims found fit the body at that
    // rate (a depth that allows more claims per subquestion no longer thins every
    // claim's words: relayed writers had cut claims to meet their counts).
    let per_claim = (rest / capacity.max(total).max(1) as f64)
        .max(SENTENCE_WORDS.min(rest / total.max(1) as f64));
    claims
        .iter()
        .map(|&n| MIN_SECTION_WORDS + (per_claim * n as f64) as usize / WORDS_STEP * WORDS_STEP)
        .collect()
}

/// The words a section is asked for: its share, bounded by its evidence — a section
/// with two claims is not asked for 500 words, and is never padded to reach any.
pub fn evidence_words(share: usize, claims: usize) -> usize {
    share.min(WORDS_PER_CLAIM * claims).max(MIN_SECTION_WORDS)
}

/// The most claims the article's `sections` could hold: theirs and every follow-up's
/// the depth allows ([`section_shares`]' `capacity`).
pub fn sections_capacity(depth: Depth, sections: usize, brief_with_parts: bool) -> usize {
    let followups = depth.limits().extra_rounds as usize * crate::deepen::MAX_FOLLOWUPS;
    (sections + followups) * depth.claims_per_subquestion(brief_with_parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_words_follow_the_depth_and_the_evidence() {
        // Four sections at quick depth: the body, summary included, stays within 800.
        let shares = section_shares(Depth::Quick, &[4, 4, 4, 4], 16);
        let sum: usize = shares.iter().sum();
        assert!(sum + (800.0 * SUMMARY_SHARE) as usize <= 800, "{shares:?}");
        let standard = section_shares(Depth::Standard, &[5; 6], 30);
        assert!(standard[0] > shares[0]);
        assert!(section_shares(Depth::Deep, &[5; 6], 30)[0] > standard[0]);
        // A section with twice the claims gets twice the words beyond the minimum (to a
        // step); none gets less than the minimum, and together they stay within the body.
        let uneven = section_shares(Depth::Standard, &[12, 6, 6, 0], 24);
        let (twice, once) = (uneven[0] - MIN_SECTION_WORDS, uneven[1] - MIN_SECTION_WORDS);
        assert!(twice.abs_diff(2 * once) <= WORDS_STEP, "{uneven:?}");
        assert!(uneven
            .iter()
            .all(|w| (w - MIN_SECTION_WORDS).is_multiple_of(WORDS_STEP)));
        assert_eq!(uneven[3], MIN_SECTION_WORDS);
        let skewed = section_shares(Depth::Quick, &[20, 1, 1, 1, 1, 1], 24);
        let sum: usize = skewed.iter().sum();
        assert!(sum <= 640, "{skewed:?}");
        // Claims beyond the capacity: still within the body.
        let over = section_shares(Depth::Quick, &[20, 20, 20, 20], 16);
        assert!(over.iter().sum::<usize>() <= 640, "{over:?}");
        // New claims in two of ten sections (a refresh's new facts and a new follow-up)
        // leave every other section's words as they were.
        let mut claims = [8, 7, 9, 8, 6, 10, 8, 7, 9, 8];
        let before = section_shares(Depth::Standard, &claims, 120);
        claims[4] += 3;
        claims[0] += 7;
        let after = section_shares(Depth::Standard, &claims, 120);
        let same = (1..10).filter(|&i| i != 4 && before[i] == after[i]).count();
        assert_eq!(same, 8, "{before:?} → {after:?}");
        // A capacity far above the claims found does not thin them below a sentence
        // each: 80 claims over 140 places get 20 words each, not 12.
        let roomy = section_shares(Depth::Standard, &[8; 10], 140);
        assert_eq!(roomy[0], MIN_SECTION_WORDS + 150, "{roomy:?}");
        // Two claims bound a section well below its share; many claims do not raise it.
        assert_eq!(evidence_words(400, 2), 90);
        assert_eq!(evidence_words(400, 40), 400);
        assert_eq!(evidence_words(400, 0), MIN_SECTION_WORDS);
    }
}
